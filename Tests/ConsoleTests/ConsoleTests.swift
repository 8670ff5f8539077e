import AsyncHTTPClient
import Foundation
import NearbyTesting
import Testing
import TestSupport

/// The web console over real HTTP against a real server, on SQLite and PostgreSQL: sign-in,
/// its cookie, every page, CSRF on every form, and the forms' effects seen through the API.
@Suite("Web console")
struct ConsoleTests {
  typealias Engine = ConsoleHarness.Engine
  let uid = "0102030405060708090a" + "aabbccddeeff"

  @Test(
    "sign-in: admin key in, client and unknown keys out, the cookie's attributes",
    .requires(.postgres),
    arguments: Engine.allCases)
  func signIn(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine)
    try await withShutdown(server) { server in
      let (admin, cookie) = try await server.signIn(server.admin)
      #expect(admin.status == 303)
      #expect(admin.header("location") == "/console")
      let set = try #require(admin.setCookie("nearby_console"))
      for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age="] {
        #expect(set.contains(attribute), "\(set)")
      }
      #expect(!set.contains("Secure"))
      #expect(!set.contains(server.admin))
      #expect(cookie != nil)

      let (client, clientCookie) = try await server.signIn(server.client)
      #expect(client.status == 403)
      #expect(client.body.contains("client API key"))
      #expect(clientCookie == nil)

      let (unknown, unknownCookie) = try await server.signIn("nk_nothing")
      #expect(unknown.status == 401)
      #expect(unknown.body.contains("Unknown or revoked API key"))
      #expect(unknownCookie == nil)

      let anonymous = try await server.request(.GET, "/console/beacons")
      #expect(anonymous.status == 303)
      #expect(anonymous.header("location") == "/console/sign-in")
      let forged = try await server.request(
        .GET, "/console", cookie: "nearby_console=key_x.dGVzdA.9999999999.n.bad")
      #expect(forged.status == 303)
    }
  }

  @Test(
    "every page answers 200 when signed in, and the API is not opened by it", .requires(.postgres),
    arguments: Engine.allCases)
  func pages(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine)
    try await withShutdown(server) { server in
      let (cookie, _) = try await server.adminSession()
      for path in [
        "/console", "/console/beacons", "/console/beacons/new", "/console/namespaces",
        "/console/keys", "/console/live", "/console/style.css", "/console/live.js",
      ] {
        let page = try await server.request(.GET, path, cookie: cookie)
        #expect(page.status == 200, "\(path): \(page.body.prefix(300))")
      }
      let overview = try await server.request(.GET, "/console", cookie: cookie)
      #expect(overview.body.contains("Open event streams"))
      #expect(overview.body.contains("healthy"))
      #expect(overview.header("content-security-policy")?.contains("default-src 'none'") == true)
      // The session cookie is no API key.
      let api = try await server.request(.GET, "/v1/beacons", cookie: cookie)
      #expect(api.status == 401)
    }
  }

  @Test(
    "every form refuses a POST without the session's CSRF token", .requires(.postgres),
    arguments: Engine.allCases)
  func csrf(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine)
    try await withShutdown(server) { server in
      let (cookie, _) = try await server.adminSession()
      for path in [
        "/console/sign-out", "/console/beacons/new", "/console/beacon/attachments",
        "/console/beacon/attachments/delete", "/console/namespaces", "/console/keys",
        "/console/keys/revoke",
      ] {
        for token in [nil, "wrong"] {
          var form = ["name": "x", "id": uid, "type": "eddystone"]
          form["csrf"] = token
          let answer = try await server.request(.POST, path, cookie: cookie, form: form)
          #expect(answer.status == 403, "\(path)")
          #expect(answer.body.contains("CSRF"), "\(path)")
        }
      }
      let signIn = try await server.request(.POST, "/console/sign-in", form: ["key": server.admin])
      #expect(signIn.status == 403)
      #expect(signIn.body.contains("CSRF"))
    }
  }

  @Test(
    "register a beacon and attach data through the forms; the API sees them; text escaped",
    .requires(.postgres),
    arguments: Engine.allCases)
  func beaconForms(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine)
    try await withShutdown(server) { server in
      let (cookie, csrf) = try await server.adminSession()
      let hostile = "<script>alert(1)</script>"
      let registered = try await server.request(
        .POST, "/console/beacons/new", cookie: cookie,
        form: ["csrf": csrf, "type": "eddystone", "id": uid, "description": hostile])
      #expect(registered.status == 303, "\(registered.body)")
      let location = try #require(registered.header("location"))
      let page = try await server.request(.GET, location, cookie: cookie)
      #expect(page.status == 200)
      #expect(!page.body.contains(hostile))
      #expect(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
      let name = try #require(
        location.components(separatedBy: "name=").last?.removingPercentEncoding)

      let added = try await server.request(
        .POST, "/console/beacon/attachments", cookie: cookie,
        form: ["csrf": csrf, "beacon": name, "namespacedType": "cafe/menu", "data": "soup"])
      #expect(added.status == 303, "\(added.body)")
      let attachments = try await server.api(.GET, "/v1/beacons/\(name)/attachments")
      #expect(attachments.status == 200)
      #expect(attachments.body.contains("c291cA=="))  // "soup"
      #expect(attachments.body.contains(#"cafe\/menu"#) || attachments.body.contains("cafe/menu"))

      // Over the API's limits: the field's error, never a 5xx.
      let long = String(repeating: "é", count: 200)
      let refused = try await server.request(
        .POST, "/console/beacons/new", cookie: cookie,
        form: [
          "csrf": csrf, "type": "eddystone", "id": uid.replacingOccurrences(of: "ff", with: "fe"),
          "description": long,
        ])
      #expect(refused.status == 422)
      #expect(refused.body.contains("id=\"description-error\""))
      #expect(refused.body.contains("the limit is 256 bytes"))
      let tooBig = try await server.request(
        .POST, "/console/beacon/attachments", cookie: cookie,
        form: [
          "csrf": csrf, "beacon": name, "namespacedType": "cafe/menu",
          "data": String(repeating: "x", count: 1025),
        ])
      #expect(tooBig.status >= 400 && tooBig.status < 500)
      #expect(tooBig.body.contains("id=\"data-error\""))
      let far = try await server.request(
        .POST, "/console/beacon/attachments", cookie: cookie,
        form: [
          "csrf": csrf, "beacon": name, "namespacedType": "cafe/menu", "data": "x",
          "maxDistance": "5000",
        ])
      #expect(far.status >= 400 && far.status < 500)
      #expect(far.body.contains("id=\"md-error\""))
      let badID = try await server.request(
        .POST, "/console/beacons/new", cookie: cookie,
        form: ["csrf": csrf, "type": "ibeacon", "id": "zz<b>", "description": ""])
      #expect(badID.status == 400)
      #expect(badID.body.contains("id=\"id-error\""))
      #expect(!badID.body.contains("<b>"))
      let missing = try await server.request(.GET, "/console/beacon?name=%00%FF", cookie: cookie)
      #expect(missing.status >= 400 && missing.status < 500)

      // Delete the attachment through its form.
      let listed = try await server.request(.GET, location, cookie: cookie)
      let attachment = try #require(
        listed.body.components(separatedBy: #"name="attachment" value=""#).dropFirst().first?
          .components(separatedBy: "\"").first)
      let deleted = try await server.request(
        .POST, "/console/beacon/attachments/delete", cookie: cookie,
        form: ["csrf": csrf, "beacon": name, "attachment": attachment])
      #expect(deleted.status == 303)
      let after = try await server.api(.GET, "/v1/beacons/\(name)/attachments")
      #expect(after.status == 200)
      #expect(!after.body.contains("menu"), "\(after.body)")

      let list = try await server.request(.GET, "/console/beacons?q=cafe%2F*", cookie: cookie)
      #expect(list.status == 200)
    }
  }

  @Test(
    "a namespace's visibility changes through its form", .requires(.postgres),
    arguments: Engine.allCases)
  func namespaces(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine)
    try await withShutdown(server) { server in
      let registered = try await server.api(
        .POST, "/v1/beacons",
        json:
          #"{"advertisedId": {"type": "eddystone", "id": "\#(uid)"}, "attachments": [{"namespacedType": "cafe/menu", "data": "c291cA=="}]}"#
      )
      #expect(registered.status == 201)
      let (cookie, csrf) = try await server.adminSession()
      let page = try await server.request(.GET, "/console/namespaces", cookie: cookie)
      #expect(page.body.contains("Make public"))
      let changed = try await server.request(
        .POST, "/console/namespaces", cookie: cookie,
        form: ["csrf": csrf, "name": "cafe", "visibility": "public"])
      #expect(changed.status == 303)
      let listed = try await server.api(.GET, "/v1/namespaces")
      let namespaces =
        (try JSONSerialization.jsonObject(with: Data(listed.body.utf8)) as? [String: Any])?[
          "namespaces"] as? [[String: String]]
      #expect(namespaces == [["name": "cafe", "visibility": "public"]], "\(listed.body)")
      let bad = try await server.request(
        .POST, "/console/namespaces", cookie: cookie,
        form: ["csrf": csrf, "name": "no/such", "visibility": "public"])
      #expect(bad.status == 400)
    }
  }

  @Test(
    "a key created is shown once; revoking a key ends its sessions", .requires(.postgres),
    arguments: Engine.allCases)
  func keys(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine)
    try await withShutdown(server) { server in
      let (cookie, csrf) = try await server.adminSession()
      let created = try await server.request(
        .POST, "/console/keys", cookie: cookie,
        form: ["csrf": csrf, "role": "admin", "label": "second <b>"])
      #expect(created.status == 201)
      let key = try #require(
        created.body.components(separatedBy: #"<p class="secret" id="new-key">"#).dropFirst().first?
          .components(separatedBy: "<").first)
      #expect(key.hasPrefix("nk_"))
      #expect(created.body.contains("second &lt;b&gt;"))
      let again = try await server.request(.GET, "/console/keys", cookie: cookie)
      #expect(!again.body.contains(key))

      // Sign in with the new key, then revoke it from the first session: its session ends.
      let (_, secondCookie) = try await server.signIn(key)
      let second = try #require(secondCookie)
      #expect(try await server.request(.GET, "/console", cookie: second).status == 200)
      let id = try #require(
        again.body.components(separatedBy: "<td><code>").compactMap {
          $0.components(separatedBy: "</code>").first
        }.last)
      let revoked = try await server.request(
        .POST, "/console/keys/revoke", cookie: cookie, form: ["csrf": csrf, "id": id])
      #expect(revoked.status == 303)
      let ended = try await server.request(.GET, "/console", cookie: second)
      #expect(ended.status == 303)
      #expect(ended.header("location") == "/console/sign-in")
      #expect(try await server.request(.GET, "/console", cookie: cookie).status == 200)

      let tooLong = try await server.request(
        .POST, "/console/keys", cookie: cookie,
        form: ["csrf": csrf, "role": "client", "label": String(repeating: "l", count: 300)])
      #expect(tooLong.status == 422)
      #expect(tooLong.body.contains("id=\"label-error\""))

      // Sign out: the cookie is cleared.
      let out = try await server.request(
        .POST, "/console/sign-out", cookie: cookie, form: ["csrf": csrf])
      #expect(out.status == 303)
      #expect(out.setCookie("nearby_console")?.contains("Max-Age=0") == true)
    }
  }

  @Test(
    "the live view streams a found event of the project's devices", .requires(.postgres),
    arguments: Engine.allCases)
  func liveEvents(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine)
    try await withShutdown(server) { server in
      let (cookie, _) = try await server.adminSession()
      var request = HTTPClientRequest(url: server.base + "/console/live/events")
      request.headers.add(name: "Cookie", value: cookie)
      let response = try await ConsoleHarness.client.execute(request, timeout: .seconds(60))
      #expect(response.status.code == 200)
      #expect(response.headers.first(name: "content-type") == "text/event-stream")

      // Alice publishes; Bob subscribes and hears Alice's token: Bob finds Alice's message.
      let time = Date().formatted(.iso8601)
      let alice = try await server.device()
      let published = try await server.report(
        alice,
        #"{"publish":[{"id":"\#(UUID().uuidString)","message":{"content":"aGk=","type":"greeting"}}]}"#
      )
      let directives = try #require(
        (try JSONSerialization.jsonObject(with: Data(published.body.utf8)) as? [String: Any])?[
          "directives"] as? [String: Any])
      let token = try #require(directives["token"] as? String)
      let bob = try await server.device()
      let heard = try await server.report(
        bob,
        #"{"subscribe":[{"id":"\#(UUID().uuidString)"}],"sightings":[{"token":"\#(token)","medium":"ble","time":"\#(time)"}]}"#
      )
      #expect(heard.body.contains("found"), "\(heard.body)")

      // The stream ends the wait as soon as the event arrives (the server's ticker wakes it).
      var received = ""
      for try await chunk in response.body {
        received += String(buffer: chunk)
        if received.contains("event: found") { break }
      }
      #expect(received.contains("event: found"))
      #expect(received.contains(#""type":"greeting""#))
      #expect(received.contains(bob.id))
    }
  }

  @Test(
    "hostile requests get 4xx pages: a huge form, bad encodings, unknown beacons",
    .requires(.postgres),
    arguments: Engine.allCases)
  func hostileRequests(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine)
    try await withShutdown(server) { server in
      let (cookie, csrf) = try await server.adminSession()
      let huge = try await server.request(
        .POST, "/console/beacons/new", cookie: cookie,
        form: ["csrf": csrf, "description": String(repeating: "a", count: 100_000)])
      #expect(huge.status == 413)
      #expect(huge.body.contains("64 KiB"))
      for query in ["name=%", "name=%C3%28", "name=" + String(repeating: "b", count: 5000), "x=1"] {
        let answer = try await server.request(.GET, "/console/beacon?\(query)", cookie: cookie)
        #expect((400..<500).contains(answer.status), "\(query): \(answer.status)")
        #expect(answer.body.contains("<h1>Refused</h1>"), "\(query)")
      }
      let garbage = try await server.request(
        .POST, "/console/keys", cookie: cookie,
        headers: ["Content-Type": "application/x-www-form-urlencoded"])
      #expect(garbage.status == 403)
      let badRevoke = try await server.request(
        .POST, "/console/keys/revoke", cookie: cookie, form: ["csrf": csrf, "id": "key_\u{0}<x>"])
      #expect(badRevoke.status == 404)
      #expect(!badRevoke.body.contains("<x>"))
      let badKind = try await server.request(
        .POST, "/console/beacons/new", cookie: cookie,
        form: ["csrf": csrf, "type": "bluetooth", "id": uid])
      #expect(badKind.status == 400)
      let badEID = try await server.request(
        .POST, "/console/beacons/new", cookie: cookie,
        form: [
          "csrf": csrf, "type": "eddystone-eid", "id": "0011223344556677", "rotationExponent": "x",
        ])
      #expect(badEID.status == 400)
      #expect(badEID.body.contains("id=\"eid-error\""))
      let badSearch = try await server.request(.GET, "/console/beacons?q=plain", cookie: cookie)
      #expect(badSearch.status == 400)
      #expect(badSearch.body.contains("id=\"q-error\""))
      let badToken = try await server.request(
        .GET, "/console/beacons?page=not%20a%20token", cookie: cookie)
      #expect((400..<500).contains(badToken.status))
    }
  }

  @Test(
    "refused sign-ins from an address are limited like refused API keys", .requires(.postgres),
    arguments: Engine.allCases)
  func signInIsRateLimited(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine) { configuration in
      configuration.refusedKeyBurstPerAddress = 2
      configuration.clock = ManualClock()
    }
    try await withShutdown(server) { server in
      var statuses: [Int] = []
      for _ in 0..<4 { statuses.append(try await server.signIn("nk_guess").0.status) }
      #expect(statuses == [401, 401, 429, 429])
      // Past the limit even the right key waits: no key is looked up.
      let (admin, cookie) = try await server.signIn(server.admin)
      #expect(admin.status == 429)
      #expect(admin.body.contains("Too many refused keys"))
      #expect(cookie == nil)
    }
  }

  @Test(
    "cookies are Secure behind a trusted TLS proxy; the console can be turned off",
    .requires(.postgres),
    arguments: Engine.allCases)
  func secureCookiesAndNoConsole(_ engine: Engine) async throws {
    let proxied = try await ConsoleHarness.start(engine) { configuration in
      configuration.trustedProxies = ["127.0.0.1"]
    }
    try await withShutdown(proxied) { proxied in
      let page = try await proxied.request(
        .GET, "/console/sign-in", headers: ["X-Forwarded-Proto": "https"])
      #expect(page.setCookie("nearby_console_sign_in")?.hasSuffix("; Secure") == true)
      let plain = try await proxied.request(.GET, "/console/sign-in")
      #expect(plain.setCookie("nearby_console_sign_in")?.contains("Secure") == false)

      let off = try await ConsoleHarness.start(engine) { configuration in
        configuration.console.isEnabled = false
      }
      try await withShutdown(off) { off throws in
        #expect(try await off.request(.GET, "/console").status == 404)
        #expect(try await off.request(.GET, "/console/sign-in").status == 404)
        #expect(try await off.api(.GET, "/v1/beacons").status == 200)
      }
    }
  }

  @Test(
    "pages count against the API's rates per address and per key", .requires(.postgres),
    arguments: Engine.allCases)
  func pagesAreRateLimited(_ engine: Engine) async throws {
    let server = try await ConsoleHarness.start(engine) { configuration in
      configuration.requestsPerSecond = 0.5
      configuration.burst = 3
      configuration.clock = ManualClock()
    }
    try await withShutdown(server) { server in
      let (cookie, _) = try await server.adminSession()  // the first page of the key's burst
      var statuses: [Int] = []
      for _ in 0..<3 {
        statuses.append(try await server.request(.GET, "/console", cookie: cookie).status)
      }
      #expect(statuses == [200, 200, 429])
      let limited = try await server.request(.GET, "/console/keys", cookie: cookie)
      #expect(limited.status == 429)
      #expect(limited.header("retry-after") != nil)
      #expect(limited.body.contains("too many requests for this API key"))
    }
  }
}
