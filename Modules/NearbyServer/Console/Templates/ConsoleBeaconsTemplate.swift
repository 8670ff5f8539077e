/// The beacon list: filters, one page of beacons, and the link to the next page.
enum ConsoleBeaconsTemplate {
  static let text = """
    <h1>Beacons</h1>
    <p><a href="/console/beacons/new">Register a beacon</a></p>
    <form method="get" action="/console/beacons" role="search">
    <label for="q">Search</label>
    <input id="q" name="q" value="{{query}}" aria-describedby="q-hint{{#error}} q-error{{/error}}"{{#error}} aria-invalid="true"{{/error}}>
    <p id="q-hint" class="hint">A property as <code>key=value</code>, or an attachment type as <code>namespace/type</code> (<code>namespace/*</code> for any type).</p>
    {{#error}}<p id="q-error" class="error">{{error}}</p>{{/error}}
    <label for="status">Status</label>
    <select id="status" name="status">
    {{#statuses}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/statuses}}
    </select>
    <button type="submit">Search</button>
    </form>
    <h2>{{count}} on this page</h2>
    {{#hasBeacons}}
    <table>
    <thead><tr><th scope="col">Beacon</th><th scope="col">Description</th><th scope="col">Status</th><th scope="col">Last seen</th><th scope="col">Attachments</th></tr></thead>
    <tbody>
    {{#beacons}}
    <tr><td><a href="/console/beacon?name={{nameQuery}}">{{name}}</a></td><td>{{description}}</td><td>{{status}}</td><td>{{lastSeen}}</td><td>{{attachments}}</td></tr>
    {{/beacons}}
    </tbody>
    </table>
    {{/hasBeacons}}
    {{^hasBeacons}}<p>No beacons match.</p>{{/hasBeacons}}
    {{#next}}<p><a href="{{next}}">Next page</a></p>{{/next}}
    """
}
