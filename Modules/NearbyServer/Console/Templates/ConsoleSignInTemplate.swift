/// The sign-in page: an admin API key.
enum ConsoleSignInTemplate {
  static let text = """
    <h1>Sign in</h1>
    <p>Sign in with an <strong>admin</strong> API key of your project (<code>nearby-server keys create --project P --role admin</code>).</p>
    <form method="post" action="/console/sign-in">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <label for="key">API key</label>
    <input id="key" name="key" type="password" autocomplete="current-password" required autofocus{{#error}} aria-invalid="true" aria-describedby="key-error"{{/error}}>
    {{#error}}<p id="key-error" class="error">{{error}}</p>{{/error}}
    <button type="submit">Sign in</button>
    </form>
    """
}
