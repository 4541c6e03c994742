% rebase('base.tpl')
<h1>Memory</h1>
% if not rows:
<p class="empty">No banked entries yet. Run <code>harnesslink backfill</code>, or work in a harness and come back.</p>
% else:
<h2>Newest entries</h2>
<ol class="newest">
  % for hit in newest:
  <li><time>{{when(hit.ts)}}</time> <span class="harness" data-harness="{{hit.origin}}">{{hit.origin}}</span>
      <a class="entry" href="{{eu(hit.path)}}">{{hit.title}}</a>
      <a class="project" href="{{u('/p/' + q(hit.project, safe=''))}}" title="{{hit.project}}">{{names[hit.project].name if hit.project in names else hit.project}}</a></li>
  % end
</ol>
% include('chart.tpl')
<h2>Projects</h2>
<table class="projects">
  <thead><tr><th>project</th><th>entries</th><th>newest</th><th>harnesses</th><th>linked</th></tr></thead>
  <tbody>
  % for row in rows:
  <tr{{!' class="start"' if row.slug == start else ''}}>
    % name = names[row.slug]
    <td><a class="project" href="{{u('/p/' + q(row.slug, safe=''))}}" title="{{row.slug}}">{{name.name}}</a>
      % if name.repository:
      <small class="repository">{{name.repository}}</small>
      % end
      % if name.folder:
      <small class="folder">{{name.folder}}</small>
      % end
    </td>
    <td class="n">{{row.entries}}</td>
    <td>{{when(row.newest)}}</td>
    <td>{{', '.join(row.harnesses)}}</td>
    <td>
      % for other in links.get(row.slug, []):
      <a href="{{u('/p/' + q(other, safe=''))}}" title="{{other}}">{{names[other].name if other in names else other}}</a>
      % end
    </td>
  </tr>
  % end
  </tbody>
</table>
% end
