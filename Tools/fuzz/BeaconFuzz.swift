// libFuzzer entry point for the beacon parsers of the BeaconFrames module. Not a SwiftPM
// target: Tools/scripts/fuzz-beacons.sh compiles it together with Modules/BeaconFrames using
// `swiftc -sanitize=fuzzer,address` and runs each parser for a bounded number of inputs.
//
// The parser is chosen by the environment variable BEACON_FUZZ_PARSER:
//   advertisement  BeaconFrame.frames(inAdvertisement:) on the whole input
//   service-data   BeaconFrame.parse(serviceData:uuid:) under 0xFEAA, and each Eddystone reader
//   manufacturer   BeaconFrame.parse(manufacturerData:companyID:): the first two input bytes
//                  are the company identifier; also the iBeacon and AltBeacon readers
//   url            EddystoneURL(url:txPower:) on the input as text, then its frame parsed back
// Every value that parses must rebuild to bytes that parse to the same value; otherwise the
// target traps and libFuzzer reports the input.

import Glibc

/// Which parser this process exercises (read once).
let parser = getenv("BEACON_FUZZ_PARSER").map { String(cString: $0) } ?? "advertisement"

/// Traps unless `frame` rebuilds to an advertisement that parses back to `frame` alone.
func checkRebuild(_ frame: BeaconFrame) {
  do throws(BeaconFrameError) {
    let again = try BeaconFrame.frames(inAdvertisement: frame.advertisement)
    precondition(again == [frame], "\(frame) did not survive build → parse: \(again)")
  } catch {
    preconditionFailure("\(frame) rebuilt to bytes that do not parse: \(error)")
  }
}

/// Runs `body`, checks what parsed, ignores typed errors (they are the expected outcome of
/// malformed input).
func exercise(_ body: () throws(BeaconFrameError) -> BeaconFrame?) {
  do throws(BeaconFrameError) {
    if let frame = try body() { checkRebuild(frame) }
  } catch {
    precondition(!error.description.isEmpty)
  }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  switch parser {
  case "service-data":
    exercise { () throws(BeaconFrameError) in
      try BeaconFrame.parse(serviceData: bytes, uuid: "feaa")
    }
    exercise { () throws(BeaconFrameError) in .eddystoneUID(try EddystoneUID(frame: bytes)) }
    exercise { () throws(BeaconFrameError) in .eddystoneURL(try EddystoneURL(frame: bytes)) }
    exercise { () throws(BeaconFrameError) in .eddystoneTLM(try EddystoneTLM(frame: bytes)) }
    exercise { () throws(BeaconFrameError) in
      .eddystoneEncryptedTLM(try EddystoneEncryptedTLM(frame: bytes))
    }
    exercise { () throws(BeaconFrameError) in .eddystoneEID(try EddystoneEID(frame: bytes)) }
  case "manufacturer":
    guard size >= 2 else { return 0 }
    let companyID = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
    let rest = UnsafeBufferPointer(rebasing: bytes[2...])
    exercise { () throws(BeaconFrameError) in
      try BeaconFrame.parse(manufacturerData: rest, companyID: companyID)
    }
    exercise { () throws(BeaconFrameError) in .iBeacon(try IBeacon(manufacturerData: rest)) }
    exercise { () throws(BeaconFrameError) in
      .altBeacon(try AltBeacon(companyID: companyID, manufacturerData: rest))
    }
  case "url":
    let text = String(decoding: bytes, as: UTF8.self)
    exercise { () throws(BeaconFrameError) in
      let url = try EddystoneURL(url: text, txPower: -20)
      let back = try EddystoneURL(frame: url.frame)
      precondition(back.url == text, "\(text) came back as \(back.url)")
      return .eddystoneURL(url)
    }
  default:
    do throws(BeaconFrameError) {
      for frame in try BeaconFrame.frames(inAdvertisement: bytes) { checkRebuild(frame) }
    } catch {
      precondition(!error.description.isEmpty)
    }
  }
  return 0
}
