/// A page that only says something: a refused form, a missing beacon, a failure.
enum ConsoleMessageTemplate {
  static let text = """
    <h1>{{heading}}</h1>
    <p{{#isError}} class="error"{{/isError}}>{{message}}</p>
    <p><a href="{{back}}">{{backText}}</a></p>
    """
}
