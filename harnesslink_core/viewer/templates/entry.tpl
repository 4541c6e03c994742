% rebase('base.tpl')
<p class="crumbs"><a href="{{u('/p/' + q(slug, safe=''))}}">{{slug}}</a> / bank / {{name}}</p>
% if entry:
<h1 class="entry-title">{{entry.title}}</h1>
<dl class="facts">
  <dt>when</dt><dd>{{when(entry.ts)}}</dd>
  <dt>harness</dt><dd><span class="harness" data-harness="{{entry.origin}}">{{entry.origin}}</span></dd>
  <dt>session</dt><dd>{{entry.session_id or '-'}}</dd>
  <dt>folder</dt><dd>{{entry.cwd or '-'}}</dd>
  <dt>tags</dt><dd>{{', '.join(entry.tags) or '-'}}</dd>
  <dt>id</dt><dd><code>{{slug}}/bank/{{name}}</code></dd>
</dl>
% for heading, body in (('Prompt', entry.prompt), ('Actions', entry.actions), ('Result', entry.result)):
%   if body.strip():
<h2>{{heading}}</h2>
<pre class="section" data-section="{{heading.lower()}}">{{body}}</pre>
%   end
% end
% end
<details{{!'' if entry else ' open'}}>
  <summary>The file as it is on disk</summary>
  <pre class="raw">{{text}}</pre>
</details>
