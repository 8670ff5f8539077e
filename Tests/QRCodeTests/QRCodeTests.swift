import Foundation
import QRCode
import TestSupport
import Testing

/// QR codes as `nearby --web` prints them: read back by a real decoder (zbar) at every version
/// and level the links and tokens need, the smallest version chosen, and too much refused.
@Suite("QR codes")
struct QRCodeTests {
  @Test(.requires(.qrReader), arguments: [QRCode.Level.low, .medium])
  func aRealReaderReadsWhatIsEncoded(level: QRCode.Level) async throws {
    let reader = try #require(ProcessInfo.processInfo.environment["NEARBY_TEST_QR_READER"])
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "nearby-qr-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    // Lengths that cross every version 1-10 at both levels, and the links --web prints.
    var texts = [1, 10, 20, 30, 45, 60, 80, 100, 120, 150, 180, 200].map { length in
      String((0..<length).map { "abcdefghijklmnopqrstuvwxyz0123456789-_/:#"[$0 % 41] })
    }
    texts.append("https://192.168.1.20:7443/web#key=ni_StNhWa-F3ZiJpOGT-7wFlqx1Xp-ktCAmL684mA5Kg1M")
    texts.append(
      "https://nearby.example.org/web#key=nk_x3K07SOp_AT7dEsHROlFma-vZdVZMLtaOgnxNog_g2M")
    var versions = Set<Int>()
    for (index, text) in texts.enumerated() {
      guard let code = try? QRCode(text: text, level: level) else {
        #expect(text.utf8.count > 200, "\(text.utf8.count) bytes refused")
        continue
      }
      versions.insert(code.version)
      let image = folder.appendingPathComponent("\(index).pgm")
      try Data(code.pgm()).write(to: image)
      let read = try await Self.read(image, with: reader)
      #expect(read == text, "version \(code.version): read \(read.debugDescription)")
    }
    #expect(versions.count >= 8, "versions covered: \(versions.sorted())")
  }

  @Test func theSmallestVersionIsChosenAndTooMuchIsRefused() throws {
    #expect(try QRCode(text: String(repeating: "a", count: 17), level: .low).version == 1)
    #expect(try QRCode(text: String(repeating: "a", count: 18), level: .low).version == 2)
    #expect(try QRCode(text: String(repeating: "a", count: 14), level: .medium).version == 1)
    #expect(try QRCode(text: String(repeating: "a", count: 15), level: .medium).version == 2)
    let link = try QRCode(
      text: "https://192.168.1.20:7443/web#key=ni_StNhWa-F3ZiJpOGT-7wFlqx1Xp-ktCAmL684mA5Kg1M")
    #expect(link.size == 17 + 4 * link.version)
    #expect(link.modules.count == link.size * link.size)
    #expect(throws: QRCodeError.tooLong(272, maximum: 271)) {
      try QRCode(bytes: [UInt8](repeating: 0x41, count: 272), level: .low)
    }
    let text = link.terminalText()
    #expect(text.split(separator: "\n").count == (link.size + 8 + 1) / 2)
  }

  static func read(_ image: URL, with reader: String) async throws -> String {
    let result = try await ChildProcess.run(
      URL(fileURLWithPath: reader), ["--raw", "-q", "--nodbus", image.path], timeout: 60)
    return result.outText.trimmingCharacters(in: .newlines)
  }
}

extension String {
  fileprivate subscript(offset: Int) -> Character { self[index(startIndex, offsetBy: offset)] }
}
