/// The project's API keys: create one (shown once), revoke one.
enum ConsoleKeysTemplate {
  static let text = """
    <h1>API keys</h1>
    {{#newKey}}
    <div class="notice" role="status">
    <p>The new {{role}} key <code>{{id}}</code>. Copy it now: it is shown only this once.</p>
    <p class="secret" id="new-key">{{key}}</p>
    </div>
    {{/newKey}}
    {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
    <table>
    <thead><tr><th scope="col">Id</th><th scope="col">Role</th><th scope="col">Label</th><th scope="col">Created</th><th scope="col">State</th><th scope="col"><span class="hint">Action</span></th></tr></thead>
    <tbody>
    {{#keys}}
    <tr><td><code>{{id}}</code></td><td>{{role}}</td><td>{{label}}</td><td>{{created}}</td><td>{{state}}{{#isCurrent}} (this session){{/isCurrent}}</td>
    <td>{{#isActive}}<form method="post" action="/console/keys/revoke">
    <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="id" value="{{id}}">
    <button class="quiet" type="submit" aria-label="Revoke key {{id}}">Revoke</button></form>{{/isActive}}</td></tr>
    {{/keys}}
    </tbody>
    </table>
    <h2>Create a key</h2>
    <form method="post" action="/console/keys">
    <input type="hidden" name="csrf" value="{{csrf}}">
    <label for="role">Role</label>
    <select id="role" name="role">
    <option value="client">client: devices (give this one to apps)</option>
    <option value="admin">admin: manages the project</option>
    </select>
    <label for="label">Label</label>
    <input id="label" name="label" value="{{values.label}}"{{#errors.label}} aria-invalid="true" aria-describedby="label-error"{{/errors.label}}>
    {{#errors.label}}<p id="label-error" class="error">{{errors.label}}</p>{{/errors.label}}
    <button type="submit">Create</button>
    </form>
    """
}
