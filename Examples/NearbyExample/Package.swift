// swift-tools-version: 6.1
// An app that uses Nearby for Linux the way every app does: as a dependency by version.
// Copy this folder, put the address you got the library from in `url:`, and `swift run`.
import PackageDescription

let package = Package(
  name: "nearby-example",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(url: "https://example.org/nearby-linux.git", from: "0.1.0")
  ],
  targets: [
    .executableTarget(
      name: "NearbyExample",
      dependencies: [
        .product(name: "Core", package: "nearby-linux"),
        .product(name: "Strategy", package: "nearby-linux"),
        .product(name: "ServerResolver", package: "nearby-linux"),
        .product(name: "LANMulticast", package: "nearby-linux"),
        .product(name: "BLEBlueZ", package: "nearby-linux"),
        .product(name: "AudioPulse", package: "nearby-linux"),
        .product(name: "PermissionStore", package: "nearby-linux"),
        .product(name: "BackgroundPersistence", package: "nearby-linux"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    )
  ]
)
