@_spi(Resolver) import Core
import Foundation
@_spi(Resolver) import Resolution
import Strategy
import Testing

/// A subscription's namespace and type filters on records, apart from any store (a store may
/// filter before it asks, so the engine's own check is tested here).
@Suite("Subscription filters")
struct SubscriptionFilterTests {
  let device = DeviceID.random()

  func subscription(namespace: String, type: String?) -> SubscriptionRecord {
    SubscriptionRecord(
      id: .random(), device: device, project: "p", namespace: namespace, type: type,
      strategy: .default, deviceTypes: .nearbyDevices, expiresAt: nil)
  }

  func publication(namespace: String, type: String) -> PublicationRecord {
    PublicationRecord(
      id: .random(), device: .random(), project: "p",
      message: Message(text: "x", type: type, namespace: namespace), strategy: .default,
      expiresAt: nil)
  }

  @Test("a type filter accepts that type only; no type filter accepts every type")
  func typeFilter() {
    let menus = subscription(namespace: "", type: "menu")
    #expect(menus.accepts(publication(namespace: "", type: "menu")))
    #expect(!menus.accepts(publication(namespace: "", type: "price")))
    #expect(!menus.accepts(publication(namespace: "", type: "")))
    let everything = subscription(namespace: "", type: nil)
    #expect(everything.accepts(publication(namespace: "", type: "menu")))
    #expect(everything.accepts(publication(namespace: "", type: "")))
  }

  @Test("the namespace must match exactly, with or without a type filter")
  func namespaceFilter() {
    let shop = subscription(namespace: "shop", type: nil)
    #expect(shop.accepts(publication(namespace: "shop", type: "menu")))
    #expect(!shop.accepts(publication(namespace: "", type: "menu")))
    #expect(!shop.accepts(publication(namespace: "shop2", type: "menu")))
    let shopMenus = subscription(namespace: "shop", type: "menu")
    #expect(!shopMenus.accepts(publication(namespace: "", type: "menu")))
    #expect(!shopMenus.accepts(publication(namespace: "shop", type: "price")))
  }
}
