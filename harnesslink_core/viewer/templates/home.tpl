% rebase('base.tpl')
<h1>Projects</h1>
% if not rows:
<p class="empty">No banked entries yet. Run <code>harnesslink backfill</code>, or work in a harness and come back.</p>
% else:
% include('chart.tpl')
<table class="projects">
  <thead><tr><th>project</th><th>entries</th><th>newest</th><th>harnesses</th><th>linked</th></tr></thead>
  <tbody>
  % for row in rows:
  <tr{{!' class="start"' if row.slug == start else ''}}>
    <td><a href="{{u('/p/' + q(row.slug, safe=''))}}">{{row.slug}}</a></td>
    <td class="n">{{row.entries}}</td>
    <td>{{when(row.newest)}}</td>
    <td>{{', '.join(row.harnesses)}}</td>
    <td>
      % for other in links.get(row.slug, []):
      <a href="{{u('/p/' + q(other, safe=''))}}">{{other}}</a>
      % end
    </td>
  </tr>
  % end
  </tbody>
</table>
% end
