% if chart:
<figure class="chart">
  <svg viewBox="0 0 {{chart.WIDTH}} {{chart.HEIGHT}}" role="img" aria-labelledby="chart-title">
    <title id="chart-title">Entries per day per harness, {{day(chart.first_day)}} to {{day(chart.first_day + chart.days - 1)}}</title>
    <line class="axis" x1="{{chart.LEFT}}" y1="{{chart.HEIGHT - chart.BOTTOM}}" x2="{{chart.WIDTH}}" y2="{{chart.HEIGHT - chart.BOTTOM}}"/>
    <line class="grid" x1="{{chart.LEFT}}" y1="{{chart.TOP}}" x2="{{chart.WIDTH}}" y2="{{chart.TOP}}"/>
    <text class="tick" x="{{chart.LEFT - 4}}" y="{{chart.TOP + 4}}" text-anchor="end">{{chart.peak}}</text>
    <text class="tick" x="{{chart.LEFT - 4}}" y="{{chart.HEIGHT - chart.BOTTOM}}" text-anchor="end">0</text>
    % for x, y, w, h, fill, tip in chart.bars:
    <rect class="bar" x="{{x}}" y="{{y}}" width="{{w}}" height="{{h}}" fill="{{fill}}"><title>{{tip}}</title></rect>
    % end
    % for x, label in chart.labels:
    <text class="tick" x="{{x}}" y="{{chart.HEIGHT - 6}}" text-anchor="middle">{{label}}</text>
    % end
  </svg>
  <figcaption>
    Entries per day ({{chart.days}} day{{'' if chart.days == 1 else 's'}} up to the newest entry):
    % for harness in chart.harnesses:
    <span class="legend"><svg class="key" width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="{{colour(harness)}}"/></svg> {{harness}} {{chart.totals[harness]}}</span>
    % end
  </figcaption>
</figure>
% end
