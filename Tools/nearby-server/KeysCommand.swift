import CommandLineSupport
import ArgumentParser
import Foundation
import ServerStorage

struct KeysCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "keys",
    abstract: "Create, list and revoke the server's project API keys (stored hashed).",
    subcommands: [Create.self, List.self, Revoke.self])

  struct Create: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Create a key for a project; the key is printed once and never stored.")

    @OptionGroup var database: DatabaseOptions
    @Option(name: .long, help: "The project the key belongs to.") var project: String
    @Option(
      name: .long,
      help: """
        client: what apps carry (register devices, report, read events, beacon attachments of \
        what they observe); admin: also the project's beacons and attachments.
        """)
    var role = APIKeyRole.client.rawValue
    @Option(name: .long, help: "A note to recognise the key by.") var label = ""
    @Flag(name: .long, help: "Print JSON.") var json = false

    func validate() throws {
      guard !project.isEmpty, project.count <= 64 else {
        throw ValidationError("--project must be 1 to 64 characters")
      }
      guard APIKeyRole(rawValue: role) != nil else {
        throw ValidationError("--role is client or admin, not \"\(role)\"")
      }
    }

    func run() async throws {
      let (project, role, label) = (project, APIKeyRole(rawValue: role) ?? .client, label)
      let created = try await withStorage(database) { storage in
        try await storage.transaction { store in
          try store.apiKeys.createAPIKey(project: project, role: role, label: label, now: Date())
        }
      }
      if json {
        print(try KeysCommand.json(created))
      } else {
        print(created.key)
        StandardStreams.error(
          "\(role) key \(created.record.id) for project \(project); keep it secret\n")
      }
    }
  }

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List keys (never their secrets).")

    @OptionGroup var database: DatabaseOptions
    @Option(name: .long, help: "Only this project's keys.") var project: String?
    @Flag(name: .long, help: "Print one JSON object a line.") var json = false

    func run() async throws {
      let project = project
      let keys = try await withStorage(database) { storage in
        try await storage.read { store in try store.apiKeys.apiKeys(project: project) }
      }
      for key in keys {
        if json {
          print(try KeysCommand.json(key))
        } else {
          let state = key.revokedAt.map { "revoked \($0)" } ?? "active"
          print("\(key.id)\t\(key.project)\t\(key.role)\t\(state)\t\(key.label)")
        }
      }
    }
  }

  struct Revoke: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Revoke a key by its id (servers refuse it and end its event streams within 5 s).")

    @OptionGroup var database: DatabaseOptions
    @Argument(help: "The key's id (key_…), as `nearby server keys list` shows it.") var id: String

    func run() async throws {
      let id = id
      let revoked = try await withStorage(database) { storage in
        try await storage.transaction { store in try store.apiKeys.revokeAPIKey(id: id, now: Date())
        }
      }
      guard revoked else { throw CommandFailure("no active key with id \(id)") }
      print("revoked \(id)")
    }
  }

  static func json(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.dateEncodingStrategy = .iso8601
    return String(decoding: try encoder.encode(value), as: UTF8.self)
  }
}

/// Opens the database for one command and closes it after.
func withStorage<T>(
  _ options: DatabaseOptions, _ body: (any ResolverStorage) async throws -> T
) async throws -> T {
  let storage: any ResolverStorage
  do { storage = try await options.location.open() } catch {
    throw CommandFailure("cannot open \(options.location): \(error)")
  }
  do {
    let result = try await body(storage)
    await storage.shutdown()
    return result
  } catch {
    await storage.shutdown()
    throw error
  }
}
