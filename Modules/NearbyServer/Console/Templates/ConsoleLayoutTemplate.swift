/// The frame of every page: skip link, navigation, sign-out, and the page's body.
enum ConsoleLayoutTemplate {
  static let text = """
    <!doctype html>
    <html lang="en">
    <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>{{title}} · Nearby console</title>
    <link rel="stylesheet" href="/console/style.css">
    </head>
    <body>
    <a class="skip" href="#main">Skip to content</a>
    <header>
    <strong>Nearby console</strong>
    {{#project}}
    <nav aria-label="Console"><ul>
    <li><a href="/console">Overview</a></li>
    <li><a href="/console/beacons">Beacons</a></li>
    <li><a href="/console/namespaces">Namespaces</a></li>
    <li><a href="/console/keys">API keys</a></li>
    <li><a href="/console/live">Live events</a></li>
    </ul></nav>
    <form method="post" action="/console/sign-out">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <span>Project <strong>{{project}}</strong></span>
    <button class="quiet" type="submit">Sign out</button>
    </form>
    {{/project}}
    </header>
    <main id="main" tabindex="-1">
    {{{body}}}
    </main>
    </body>
    </html>
    """
}
