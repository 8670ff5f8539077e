import Foundation
import NIOCore

/// The certificate `nearby --web` serves HTTPS with (browsers give a page the microphone only
/// over HTTPS): the files given with `--web-certificate`/`--web-key`, else a self-signed one
/// for this box's addresses, made once with openssl and kept under
/// `$XDG_STATE_HOME/nearby/web/` so that a phone that accepted it once is not asked again
/// (made anew when an address is missing from it or it has under 30 days left).
enum WebCertificate {
  struct Files {
    var certificate: String
    var key: String
    var selfSigned: Bool
  }

  static func files(options: WebOptions, addresses: [String]) throws -> Files {
    if let certificate = options.webCertificate, let key = options.webKey {
      return Files(certificate: certificate, key: key, selfSigned: false)
    }
    let folder = stateFolder().appendingPathComponent("web")
    let certificate = folder.appendingPathComponent("certificate.pem").path
    let key = folder.appendingPathComponent("key.pem").path
    let names = folder.appendingPathComponent("names").path
    let wanted = (["127.0.0.1"] + addresses).sorted().joined(separator: ",")
    let current = (try? String(contentsOfFile: names, encoding: .utf8)) ?? ""
    let fresh =
      FileManager.default.fileExists(atPath: key) && current == wanted
      && run(["x509", "-checkend", "\(30 * 86_400)", "-noout", "-in", certificate]) == 0
    if !fresh {
      try FileManager.default.createDirectory(
        atPath: folder.path, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
      let alternatives = (["DNS:localhost"] + wanted.split(separator: ",").map { "IP:\($0)" })
        .joined(separator: ",")
      let status = run([
        "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", key, "-out", certificate, "-days", "397", "-subj", "/CN=nearby --web",
        "-addext", "subjectAltName=\(alternatives)",
      ])
      guard status == 0 else {
        throw ExitFailure(
          "cannot make a certificate for --web: openssl is missing or failed (\(status)); "
            + "install openssl, or give --web-certificate and --web-key",
          code: ExitCodes.unavailable)
      }
      try Data(wanted.utf8).write(to: URL(fileURLWithPath: names))
    }
    return Files(certificate: certificate, key: key, selfSigned: true)
  }

  /// This box's IPv4 addresses other than loopback (on `interface` only, when given), those
  /// of the interface of the default route first: the link names the first, and a phone on
  /// the LAN reaches that one (not a container bridge's).
  static func addresses(interface: String?) -> [String] {
    let devices = (try? System.enumerateDevices()) ?? []
    let preferred = defaultRouteInterface()
    return devices.compactMap { device -> (String, Bool)? in
      guard let address = device.address, case .v4 = address, let ip = address.ipAddress,
        !ip.hasPrefix("127."), interface == nil || device.name == interface
      else { return nil }
      return (ip, device.name == preferred)
    }
    .sorted { $0.1 && !$1.1 }
    .map(\.0).uniqued()
  }

  /// The interface of the IPv4 default route (`/proc/net/route`), if any.
  static func defaultRouteInterface() -> String? {
    guard let table = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8) else {
      return nil
    }
    for line in table.split(separator: "\n").dropFirst() {
      let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
      if fields.count > 2, fields[1] == "00000000" { return String(fields[0]) }
    }
    return nil
  }

  private static func stateFolder() -> URL {
    let environment = ProcessInfo.processInfo.environment
    if let state = environment["XDG_STATE_HOME"], !state.isEmpty {
      return URL(fileURLWithPath: state).appendingPathComponent("nearby")
    }
    return FileManager.default.homeDirectoryForCurrentUser
      .appendingPathComponent(".local/state/nearby")
  }

  /// `openssl ARGUMENTS`, its output discarded: its exit status (127 when it is missing).
  private static func run(_ arguments: [String]) -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["openssl"] + arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    do { try process.run() } catch { return 127 }
    process.waitUntilExit()
    return process.terminationStatus
  }
}

extension Array where Element: Hashable {
  fileprivate func uniqued() -> [Element] {
    var seen = Set<Element>()
    return filter { seen.insert($0).inserted }
  }
}
