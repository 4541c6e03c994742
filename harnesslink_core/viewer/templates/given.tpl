% rebase('base.tpl')
<h1>Given to sessions{{' from ' + slug if slug else ''}}</h1>
<p>What the prompt hook put into each session, as the ledger records it (a session is never given an entry twice).
% if slug:
<a href="{{u('/given')}}">Every project</a>.
% end
</p>
% if not sessions:
<p class="empty">Nothing given yet.</p>
% end
% for s in sessions:
<section class="session">
  <h2><span class="harness" data-harness="{{s.harness}}">{{s.harness}}</span> <code>{{s.session_id}}</code> <small>{{len(s.entries)}} given, last {{when(s.last)}}</small></h2>
  <ul>
  % for entry_id, at in s.entries:
    <li><time>{{when(at)}}</time> <a href="{{eu(entry_id)}}">{{titles.get(entry_id) or entry_id}}</a></li>
  % end
  </ul>
</section>
% end
