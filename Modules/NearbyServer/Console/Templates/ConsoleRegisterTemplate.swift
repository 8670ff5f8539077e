/// The form that registers a beacon (Eddystone-UID, iBeacon, AltBeacon or Eddystone-EID).
enum ConsoleRegisterTemplate {
  static let text = """
    <h1>Register a beacon</h1>
    <form method="post" action="/console/beacons/new">
    <input type="hidden" name="csrf" value="{{csrf}}">
    {{#errors.form}}<p class="error" role="alert">{{errors.form}}</p>{{/errors.form}}
    <label for="type">Kind</label>
    <select id="type" name="type">
    {{#kinds}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/kinds}}
    </select>
    <label for="id">Advertised id (hex)</label>
    <input id="id" name="id" value="{{values.id}}" required aria-describedby="id-hint{{#errors.id}} id-error{{/errors.id}}"{{#errors.id}} aria-invalid="true"{{/errors.id}}>
    <p id="id-hint" class="hint">Eddystone-UID: namespace (10 bytes) + instance (6 bytes), 32 digits; iBeacon: UUID + major + minor, 40 digits; AltBeacon: 40 digits; Eddystone-EID: the id it broadcasts now, 16 digits.</p>
    {{#errors.id}}<p id="id-error" class="error">{{errors.id}}</p>{{/errors.id}}
    <label for="description">Description</label>
    <input id="description" name="description" value="{{values.description}}"{{#errors.description}} aria-invalid="true" aria-describedby="description-error"{{/errors.description}}>
    {{#errors.description}}<p id="description-error" class="error">{{errors.description}}</p>{{/errors.description}}
    <fieldset>
    <legend>Eddystone-EID only</legend>
    <label for="identityKey">Identity key (32 hex digits)</label>
    <input id="identityKey" name="identityKey" value="{{values.identityKey}}" autocomplete="off"{{#errors.eid}} aria-invalid="true" aria-describedby="eid-error"{{/errors.eid}}>
    <label for="rotationExponent">Rotation exponent (6 to 15)</label>
    <input id="rotationExponent" name="rotationExponent" inputmode="numeric" value="{{values.rotationExponent}}">
    <label for="clockValue">Beacon clock now (seconds)</label>
    <input id="clockValue" name="clockValue" inputmode="numeric" value="{{values.clockValue}}">
    {{#errors.eid}}<p id="eid-error" class="error">{{errors.eid}}</p>{{/errors.eid}}
    </fieldset>
    <button type="submit">Register</button>
    </form>
    """
}
