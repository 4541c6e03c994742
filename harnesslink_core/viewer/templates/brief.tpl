% rebase('base.tpl')
<p class="crumbs"><a href="{{u('/p/' + q(view.slug, safe=''))}}">{{view.slug}}</a> / brief</p>
<h1>The brief a session starts with</h1>
<p class="tabs">
% for name in harnesses:
<a href="{{u('/p/' + q(view.slug, safe='') + '/brief', harness=name)}}"{{!' aria-current="page"' if name == harness else ''}}>{{name}}</a>
% end
</p>
% if brief is None:
<p class="empty">No folder of this project is known, so there is no session to brief.</p>
% elif not brief.text:
<p class="empty">Nothing to brief: no notes or banked turns for this project yet.</p>
% else:
<p>For a {{harness}} session in <code>{{view.cwd}}</code>, within {{budget}} characters ({{len(brief.text)}} used):
included {{', '.join(brief.included) or 'nothing'}}{{'; dropped ' + ', '.join(brief.dropped) if brief.dropped else ''}}.</p>
<pre class="brief">{{brief.text}}</pre>
% end
