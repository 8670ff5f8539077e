import TestSupport
import Foundation
import MediumTestKit
import PermissionStore
import Testing
import NearbyTesting

@Suite("DefaultsStore")
struct DefaultsStoreTests {
  struct Profile: Codable, Sendable, Equatable {
    var name: String
    var tags: [String]
  }

  @Test("typed values round-trip and the file is readable JSON")
  func typedValues() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let store = try await DefaultsStore(appID: "com.example.app", directory: folder.url)
    try await store.set(true, forKey: "flag")
    try await store.set(42, forKey: "count")
    try await store.set(2.5, forKey: "ratio")
    try await store.set("hello", forKey: "greeting")
    try await store.set(Data([0, 1, 2, 255]), forKey: "blob")
    try await store.set(Profile(name: "Ada", tags: ["a", "b"]), forKey: "profile")
    #expect(store.bool(forKey: "flag") == true)
    #expect(store.integer(forKey: "count") == 42)
    #expect(store.double(forKey: "ratio") == 2.5)
    #expect(store.double(forKey: "count") == 42)
    #expect(store.string(forKey: "greeting") == "hello")
    #expect(store.data(forKey: "blob") == Data([0, 1, 2, 255]))
    #expect(
      try store.value(Profile.self, forKey: "profile") == Profile(name: "Ada", tags: ["a", "b"]))
    #expect(try store.value(Data.self, forKey: "blob") == Data([0, 1, 2, 255]))
    #expect(try store.value(Int.self, forKey: "missing") == nil)
    #expect(throws: StoreError.self) { try store.value(Int.self, forKey: "greeting") }

    // A second store (a new process would do the same) reads what the first wrote.
    let reopened = try await DefaultsStore(appID: "com.example.app", directory: folder.url)
    #expect(reopened.dictionaryRepresentation() == store.dictionaryRepresentation())
    #expect(reopened.keys == ["blob", "count", "flag", "greeting", "profile", "ratio"])

    let text = try String(contentsOf: store.fileURL, encoding: .utf8)
    #expect(text.contains("\"greeting\" : \"hello\""))
    #expect(text.contains("\"flag\" : true"))
    #expect(store.fileURL.lastPathComponent == "com.example.app.json")

    try await store.removeValue(forKey: "flag")
    #expect(store.bool(forKey: "flag") == nil)
    try await store.set(nil as Int?, forKey: "count")
    #expect(store.integer(forKey: "count") == nil)
  }

  @Test("app ids that cannot name a file are refused", arguments: ["", ".hidden", "a/b", "x y"])
  func invalidAppID(_ appID: String) async throws {
    await #expect(throws: StoreError.invalidAppID(appID)) {
      _ = try await DefaultsStore(appID: appID, directory: URL(fileURLWithPath: "/tmp"))
    }
  }

  @Test("the folder follows XDG_CONFIG_HOME, else ~/.config")
  func defaultDirectory() {
    #expect(
      DefaultsStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "/x/conf", "HOME": "/h"])
        .path == "/x/conf/nearby")
    #expect(
      DefaultsStore.defaultDirectory(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/h"])
        .path == "/h/.config/nearby")
    #expect(DefaultsStore.defaultDirectory(environment: ["HOME": "/h"]).path == "/h/.config/nearby")
  }

  @Test("concurrent writes in one process are all kept")
  func concurrentWritesInProcess() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let store = try await DefaultsStore(appID: "app", directory: folder.url)
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0..<50 {
        group.addTask { try await store.set(index, forKey: "k\(index)") }
        group.addTask { try await store.update("sum", as: Int.self) { ($0 ?? 0) + 1 } }
      }
      try await group.waitForAll()
    }
    let reopened = try await DefaultsStore(appID: "app", directory: folder.url)
    #expect(reopened.integer(forKey: "sum") == 50)
    #expect(reopened.keys.count == 51)
  }

  @Test("a corrupt file at open is moved aside, reported, and the store starts clean")
  func corruptAtOpen() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let file = folder.url.appendingPathComponent("app.json")
    try Data("{\"half\": tr".utf8).write(to: file)
    let store = try await DefaultsStore(appID: "app", directory: folder.url)
    let corrupt = try #require(store.corruptFiles.first)
    #expect(corrupt.movedTo.lastPathComponent.hasPrefix("app.json.corrupt-"))
    #expect(try Data(contentsOf: corrupt.movedTo) == Data("{\"half\": tr".utf8))
    #expect(store.keys.isEmpty)
    try await store.set(1, forKey: "after")
    let reopened = try await DefaultsStore(appID: "app", directory: folder.url)
    #expect(reopened.integer(forKey: "after") == 1)
    #expect(reopened.corruptFiles.isEmpty)
  }

  @Test("a file corrupted while open is moved aside and reported as an event")
  func corruptWhileOpen() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let store = try await DefaultsStore(appID: "app", directory: folder.url)
    let events = StreamRecorder(store.events())
    try await store.set("kept", forKey: "before")
    // Another program replaces the file with garbage (atomically, as an editor would).
    let garbage = folder.url.appendingPathComponent("garbage")
    try Data("not json at all".utf8).write(to: garbage)
    try FileManager.default.moveItem(at: garbage, to: store.fileURL.appendingPathExtension("x"))
    #expect(rename(store.fileURL.path + ".x", store.fileURL.path) == 0)
    #expect(
      await events.until() { elements in
        elements.contains {
          if case .corruptFileMovedAside = $0 { true } else { false }
        }
      })
    let corrupt = try #require(store.corruptFiles.first)
    #expect(try String(contentsOf: corrupt.movedTo, encoding: .utf8) == "not json at all")
    #expect(store.string(forKey: "before") == nil)
    try await store.set(2, forKey: "after")
    let reopened = try await DefaultsStore(appID: "app", directory: folder.url)
    #expect(reopened.integer(forKey: "after") == 2)
  }

  @Test("a closed store refuses writes")
  func closed() async throws {
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let store = try await DefaultsStore(appID: "app", directory: folder.url)
    store.close()
    await #expect(throws: StoreError.closed) { try await store.set(1, forKey: "k") }
  }
}
