import BlueZTestSupport
import DBus
import Foundation
import Testing
import TestSupport
import Tokens

@testable import BLEBlueZ
import BeaconFrames

/// Changes of the advert that arrive together run one after the other (the engine's gates,
/// BlueZEngine+Gates.swift). In the serialized double suite.
extension BlueZDoubleTests {
  /// Three tokens transmitted at once, each while the one before may still wait for
  /// bluetoothd's answer: one advert stays on the adapter, one of the three (the last to
  /// run), and no earlier one is left on the air.
  @Test(.requires(.bluezDouble)) func transmitsArrivingTogetherLeaveOneAdvert() async throws {
    let control = try await DoubleControl.connect()
    defer { control.close() }
    let medium = try await control.medium("hci0")
    for _ in 0..<5 {
      let tokens = [Token.random(), Token.random(), Token.random()]
      try await withThrowingTaskGroup { group in
        for token in tokens { group.addTask { try await medium.transmit(token) } }
        try await group.waitForAll()
      }
      let adverts = try await control.adverts("hci0")
      #expect(adverts.count == 1, "\(adverts.count) adverts on hci0")
      let payload =
        adverts.first?["ServiceData"]?.stringDictionary?[BLETokenFrame.serviceUUID]?.bytes
      let advertised = try payload.map { try BLETokenFrame(payload: $0).token }
      #expect(advertised.map(tokens.contains) == true)
      #expect(advertised == (await medium.engine.advert?.token))
    }
    await medium.shutdown()
    #expect(try await control.adverts("hci0").isEmpty)
  }
}
