% rebase('base.tpl')
<h1>Search</h1>
<p class="scope">
% if view:
As a session in <code>{{view.cwd or view.slug}}</code> searches: {{', '.join(view.scope)}} ·
<a href="{{u('/search', q=query)}}">search every project</a>.
% else:
Every project.
% end
It is the same recall as <code>memory_search</code> and <code>harnesslink recall</code>.
</p>
% if query and not terms:
<p class="empty">No words to search for in that.</p>
% elif query and not hits:
<p class="empty">Nothing matches <q>{{query}}</q>.</p>
% elif hits:
<p>{{len(hits)}} match{{'' if len(hits) == 1 else 'es'}} for <q>{{query}}</q> (terms: {{', '.join(terms)}}), best first:</p>
<ol class="hits">
  % for hit in hits:
  <li>
    <a class="entry" href="{{eu(hit.path)}}">{{hit.title}}</a>
    <div class="meta">{{when(hit.ts)}} · <span class="harness" data-harness="{{hit.origin}}">{{hit.origin}}</span> · {{hit.project}} · score {{'%.2f' % hit.score}} · matched {{', '.join(hit.matched) or '-'}}</div>
    % label = trust.label(hit.path) if trust else ''
    % if label:
    <div class="meta trust">{{label}}</div>
    % end
    % excerpt = ' '.join(hit.result.split())
    % if excerpt:
    <div class="excerpt">{{excerpt[:300]}}{{'…' if len(excerpt) > 300 else ''}}</div>
    % end
  </li>
  % end
</ol>
% end
