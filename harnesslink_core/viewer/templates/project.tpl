% rebase('base.tpl')
<h1>{{name.name}}</h1>
<dl class="facts">
  % if name.repository:
  <dt>repository</dt><dd>{{name.repository}}</dd>
  % end
  <dt>in the tree</dt><dd><code>{{view.slug}}</code></dd>
  <dt>folders</dt>
  <dd>
    % for folder, count in view.folders:
    <span class="folder">{{folder or '(no folder recorded)'}} <small>{{count}}</small></span>
    % end
    % if not view.folders:
    <span class="empty">none indexed</span>
    % end
  </dd>
  <dt>seen as</dt><dd>{{'a session in ' + view.cwd if view.cwd else 'no folder known: this project alone'}}</dd>
  <dt>linked</dt>
  <dd>
    % for other in view.linked:
    <a href="{{u('/p/' + q(other, safe=''))}}">{{other}}</a>
    % end
    % if not view.linked:
    <span class="empty">none (<code>linked.txt</code>)</span>
    % end
  </dd>
  <dt>searches</dt><dd>{{', '.join(view.scope)}}</dd>
  <dt>more</dt>
  <dd><a href="{{u('/p/' + q(view.slug, safe='') + '/brief')}}">the brief a session starts with</a> ·
      <a href="{{u('/given', p=view.slug)}}">what sessions were given from it</a></dd>
</dl>
% include('chart.tpl')
<h2>Timeline <small>{{total}} entr{{'y' if total == 1 else 'ies'}}</small></h2>
% last = None
% for hit in entries:
%   this = when(hit.ts)[:10]
%   if this != last:
%     if last is not None:
</ol>
%     end
<h3>{{this}}</h3>
<ol class="timeline">
%     last = this
%   end
  <li><time>{{when(hit.ts)[11:]}}</time> <span class="harness" data-harness="{{hit.origin}}">{{hit.origin}}</span>
      <a class="entry" href="{{eu(hit.path)}}">{{hit.title}}</a></li>
% end
% if last is not None:
</ol>
% end
<p class="pages">
% if offset:
<a href="{{u('/p/' + q(view.slug, safe=''), page=max(offset // step - 1, 0))}}">newer</a>
% end
% if offset + step < total:
<a href="{{u('/p/' + q(view.slug, safe=''), page=offset // step + 1)}}">older</a>
% end
</p>
