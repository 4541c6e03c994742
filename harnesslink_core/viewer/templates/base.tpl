<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{title}} · HarnessLink memory</title>
<link rel="stylesheet" href="{{u('/static/view.css')}}">
</head>
<body>
<header>
  <a class="brand" href="{{u('/')}}">HarnessLink memory</a>
  <nav><a href="{{u('/')}}">Projects</a> <a href="{{u('/given')}}">Given to sessions</a></nav>
  <form class="search" action="{{u('/search')}}" method="get" role="search">
    % scoped = get('view', None)
    <input type="search" name="q" value="{{get('query', '')}}" placeholder="{{'Search ' + scoped.slug if scoped else 'Search every project'}}" aria-label="search">
    % if scoped:
    <input type="hidden" name="p" value="{{scoped.slug}}">
    % end
    <button type="submit">Search</button>
  </form>
</header>
<main>
{{!base}}
</main>
<footer>Read-only · served on 127.0.0.1 to this browser only · times in UTC</footer>
</body>
</html>
