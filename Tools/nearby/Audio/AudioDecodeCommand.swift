import CommandLineSupport
import ArgumentParser
import AudioModem
import Foundation

/// `nearby audio decode`: every token found in a WAV file.
struct AudioDecodeCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "decode",
    abstract: "Find tokens in a WAV file: one line per token (hex, offset, SNR).",
    discussion: """
      Prints "<token>  <offset> s  <snr> dB" a token (SNR in the 1.5 kHz band), or with --json \
      one object a line: {"offset":1.25,"snr_db":12.5,"token":"0123456789abcdef"}. Exits 0 \
      whether or not a token was found; 1 when the file cannot be read as WAV.
      """)

  @Argument(help: "A WAV file (PCM 16/24/32-bit or float, any channels; 44.1 kHz or more).")
  var file: String

  @Flag(help: "One JSON object a line.")
  var json = false

  struct Line: Encodable {
    var token: String
    var offset: Double
    var snrDB: Double

    enum CodingKeys: String, CodingKey {
      case token, offset
      case snrDB = "snr_db"
    }
  }

  func run() throws {
    let wav: WAVFile
    do {
      let data = try Data(contentsOf: URL(fileURLWithPath: file))
      wav = try WAVFile(data: data)
    } catch let error as WAVFile.ReadError {
      fail("\(file): \(error)")
    } catch {
      fail("cannot read \(file): \(error.localizedDescription)")
    }
    var decoder: AudioModemDecoder
    do {
      decoder = try AudioModemDecoder(sampleRate: Double(wav.sampleRate))
    } catch {
      fail("\(file): \(error)")
    }
    let found = decoder.process(wav.samples) + decoder.finish()
    for token in found {
      let offset = (token.offset * 1000).rounded() / 1000
      let snr = (token.snrDB * 10).rounded() / 10
      if json {
        print(JSONLine.encode(Line(token: token.token.hex, offset: offset, snrDB: snr)))
      } else {
        print(String(format: "%@  %.3f s  %.1f dB", token.token.hex, offset, snr))
      }
    }
  }

  private func fail(_ message: String) -> Never {
    StandardStreams.error("error: \(message)\n")
    Foundation.exit(1)
  }
}
