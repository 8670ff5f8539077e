/// The project's namespaces and their visibility.
enum ConsoleNamespacesTemplate {
  static let text = """
    <h1>Namespaces</h1>
    {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
    {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
    <p class="hint">Public: any project that names the namespace reads its attachments. Unlisted: your project only.</p>
    {{#hasNamespaces}}
    <table>
    <thead><tr><th scope="col">Namespace</th><th scope="col">Visibility</th><th scope="col"><span class="hint">Change</span></th></tr></thead>
    <tbody>
    {{#namespaces}}
    <tr><td><code>{{name}}</code></td><td>{{visibility}}</td>
    <td><form method="post" action="/console/namespaces">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="name" value="{{name}}"><input type="hidden" name="visibility" value="{{other}}">
    <button class="quiet" type="submit" aria-label="Make {{name}} {{other}}">Make {{other}}</button></form></td></tr>
    {{/namespaces}}
    </tbody>
    </table>
    {{/hasNamespaces}}
    {{^hasNamespaces}}<p>No namespaces yet: a namespace appears with its first attachment.</p>{{/hasNamespaces}}
    """
}
