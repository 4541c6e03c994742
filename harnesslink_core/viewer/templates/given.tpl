% rebase('base.tpl')
<h1>Given to sessions{{' from ' + slug if slug else ''}}</h1>
<p>What the prompt hook put into each session, as the ledger records it (a session is never given an entry twice).
% if slug:
<a href="{{u('/given')}}">Every project</a>.
% end
</p>
% if sessions:
<p class="given-opened">{{given_count}} given, {{opened_count}} opened ({{round(100 * opened_count / given_count) if given_count else 0}} %): a session opened an entry when it called memory_get on it or read its file.</p>
<svg class="bar" width="360" height="14" role="img" aria-label="{{opened_count}} of {{given_count}} opened"><rect width="360" height="14" fill="#ddd"/><rect width="{{int(360 * opened_count / given_count) if given_count else 0}}" height="14" fill="#3a7"/></svg>
% end
% if not sessions:
<p class="empty">Nothing given yet.</p>
% end
% for s in sessions:
<section class="session">
  <h2><span class="harness" data-harness="{{s.harness}}">{{s.harness}}</span> <code>{{s.session_id}}</code> <small>{{len(s.entries)}} given, last {{when(s.last)}}</small></h2>
  <ul>
  % for entry_id, at in s.entries:
    <li><time>{{when(at)}}</time> <a href="{{eu(entry_id)}}">{{titles.get(entry_id) or entry_id}}</a>
    % if (s.harness, s.session_id, entry_id) in opened:
      <span class="opened">opened {{when(opened[(s.harness, s.session_id, entry_id)])}}</span>
    % else:
      <span class="unopened">not opened</span>
    % end
    </li>
  % end
  </ul>
</section>
% end
