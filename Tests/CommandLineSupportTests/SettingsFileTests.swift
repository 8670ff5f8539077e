import CommandLineSupport
import Testing

@Suite("Settings files: one option a line, read as the command line")
struct SettingsFileTests {
  @Test func linesBecomeOptionsInTheirOrderFlagsAndRepeatsIncluded() throws {
    let file = try SettingsFile(
      parsing: """
        # the server's settings
        database = /var/lib/nearby/resolver.sqlite

          port=7171\t
        trusted-proxy = 10.0.0.1
        trusted-proxy = 10.0.0.2
        open-metrics = true
        no-console = false
        console-secret-file = "/etc/nearby/with space"
        """, path: "/etc/nearby/server.conf")
    #expect(
      file.arguments() == [
        "--database", "/var/lib/nearby/resolver.sqlite", "--port", "7171", "--trusted-proxy",
        "10.0.0.1", "--trusted-proxy", "10.0.0.2", "--open-metrics", "--console-secret-file",
        "/etc/nearby/with space",
      ])
    #expect(file.settings.map(\.line) == [2, 4, 5, 6, 7, 8, 9])
    #expect(
      file.arguments(keeping: ["database"]) == ["--database", "/var/lib/nearby/resolver.sqlite"])
  }

  @Test(arguments: [
    ("port 7171", "/s.conf:2: expected `name = value`, got \"port 7171\""),
    ("--port = 7171", "/s.conf:2: \"--port\" is not an option name"),
    ("Port = 7171", "/s.conf:2: \"Port\" is not an option name"),
    (" = 7171", "/s.conf:2: \"\" is not an option name"),
  ])
  func aBadLineIsNamedWithItsFileAndNumber(line: String, message: String) {
    #expect {
      try SettingsFile(parsing: "# ok\n\(line)\n", path: "/s.conf")
    } throws: { error in
      (error as? SettingsFileError)?.description.hasPrefix(message) == true
    }
  }

  @Test func aFileOverTheLimitIsRefusedNamingIt() {
    let text = String(repeating: "# padding\n", count: SettingsFile.maximumBytes / 10 + 1)
    #expect {
      try SettingsFile(parsing: text, path: "/big.conf")
    } throws: { error in
      "\(error)".contains("over the \(SettingsFile.maximumBytes) a settings file may hold")
    }
  }

  @Test func anEmptyFileGivesNoArguments() throws {
    #expect(try SettingsFile(parsing: "\n# nothing\n\n", path: "f").arguments().isEmpty)
  }
}
