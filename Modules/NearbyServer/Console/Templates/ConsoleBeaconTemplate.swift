/// One beacon: what it is, its metadata, diagnostics and alerts, and its attachments.
enum ConsoleBeaconTemplate {
  static let text = """
    <h1>Beacon {{name}}</h1>
    {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
    <table>
    <tbody>
    <tr><th scope="row">Kind</th><td>{{kind}}</td></tr>
    <tr><th scope="row">Advertised id</th><td><code>{{advertisedID}}</code></td></tr>
    <tr><th scope="row">Description</th><td>{{description}}</td></tr>
    <tr><th scope="row">Status</th><td>{{status}}</td></tr>
    {{#metadata}}<tr><th scope="row">{{label}}</th><td>{{value}}</td></tr>{{/metadata}}
    </tbody>
    </table>
    <h2>Diagnostics</h2>
    {{#diagnostics}}
    <table><tbody>
    {{#rows}}<tr><th scope="row">{{label}}</th><td>{{value}}</td></tr>{{/rows}}
    <tr><th scope="row">Alerts</th><td>{{alerts}}</td></tr>
    </tbody></table>
    {{/diagnostics}}
    {{^diagnostics}}<p>No diagnostics (a decommissioned beacon has none).</p>{{/diagnostics}}
    <h2>Attachments</h2>
    {{#hasAttachments}}
    <table>
    <thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Data (base64)</th><th scope="col">Within</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
    <tbody>
    {{#attachments}}
    <tr><td><code>{{name}}</code></td><td>{{namespacedType}}</td><td><code>{{data}}</code></td><td>{{distance}}</td>
    <td><form method="post" action="/console/beacon/attachments/delete">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="beacon" value="{{beacon}}"><input type="hidden" name="attachment" value="{{name}}">
    <button class="quiet" type="submit" aria-label="Delete attachment {{name}}">Delete</button></form></td></tr>
    {{/attachments}}
    </tbody>
    </table>
    {{/hasAttachments}}
    {{^hasAttachments}}<p>No attachments.</p>{{/hasAttachments}}
    <h2 id="add">Add an attachment</h2>
    <form method="post" action="/console/beacon/attachments">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <input type="hidden" name="beacon" value="{{name}}">
    {{#errors.form}}<p class="error" role="alert">{{errors.form}}</p>{{/errors.form}}
    <label for="namespacedType">Namespaced type</label>
    <input id="namespacedType" name="namespacedType" value="{{values.namespacedType}}" required aria-describedby="nt-hint{{#errors.namespacedType}} nt-error{{/errors.namespacedType}}"{{#errors.namespacedType}} aria-invalid="true"{{/errors.namespacedType}}>
    <p id="nt-hint" class="hint"><code>namespace/type</code>, such as <code>cafe/menu</code>.</p>
    {{#errors.namespacedType}}<p id="nt-error" class="error">{{errors.namespacedType}}</p>{{/errors.namespacedType}}
    <label for="data">Data</label>
    <textarea id="data" name="data" rows="3" aria-describedby="data-hint{{#errors.data}} data-error{{/errors.data}}"{{#errors.data}} aria-invalid="true"{{/errors.data}}>{{values.data}}</textarea>
    <p id="data-hint" class="hint">Up to 1024 bytes, as text (UTF-8) or, ticked below, as base64.</p>
    <label><input type="checkbox" name="base64" value="on"{{#values.base64}} checked{{/values.base64}}> The data is base64</label>
    {{#errors.data}}<p id="data-error" class="error">{{errors.data}}</p>{{/errors.data}}
    <label for="maxDistance">Only within (metres, optional)</label>
    <input id="maxDistance" name="maxDistance" inputmode="decimal" value="{{values.maxDistance}}"{{#errors.maxDistance}} aria-invalid="true" aria-describedby="md-error"{{/errors.maxDistance}}>
    {{#errors.maxDistance}}<p id="md-error" class="error">{{errors.maxDistance}}</p>{{/errors.maxDistance}}
    <button type="submit">Add</button>
    </form>
    """
}
