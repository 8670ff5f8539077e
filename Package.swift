// swift-tools-version: 6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
  name: "nearby-linux",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "Strategy", targets: ["Strategy"]),
    .library(name: "Tokens", targets: ["Tokens"]),
    .library(name: "Core", targets: ["Core"]),
    .library(name: "Resolution", targets: ["Resolution"]),
    .library(name: "MediumTestKit", targets: ["MediumTestKit"]),
    .library(name: "AudioModem", targets: ["AudioModem"]),
    .library(name: "AudioPulse", targets: ["AudioPulse"]),
    .executable(name: "nearby", targets: ["nearby"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
  ],
  targets: [
    .target(name: "Strategy", path: "Modules/Strategy", swiftSettings: strictSwift),
    .target(name: "Tokens", path: "Modules/Tokens", swiftSettings: strictSwift),
    .target(
      name: "Core",
      dependencies: [
        "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "DequeModule", package: "swift-collections"),
      ],
      path: "Modules/Core",
      swiftSettings: strictSwift
    ),
    .target(
      name: "Resolution",
      dependencies: [
        "Core", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "HeapModule", package: "swift-collections"),
      ],
      path: "Modules/Resolution",
      swiftSettings: strictSwift
    ),
    .target(
      name: "MediumTestKit",
      dependencies: [
        "Core", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Modules/MediumTestKit",
      swiftSettings: strictSwift
    ),
    .target(
      name: "AudioModem", dependencies: ["Tokens"], path: "Plugins/AudioPulse/Modem",
      swiftSettings: strictSwift),
    .target(
      name: "AudioModemTestKit", dependencies: ["AudioModem", "Tokens"],
      path: "Plugins/AudioPulse/ModemTestKit", swiftSettings: strictSwift),
    .systemLibrary(
      name: "CPulse", path: "Plugins/AudioPulse/CPulse", pkgConfig: "libpulse-simple",
      providers: [.apt(["libpulse-dev"])]),
    .target(
      name: "AudioPulse",
      dependencies: [
        "CPulse", "AudioModem", "Core", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Plugins/AudioPulse/Medium", swiftSettings: strictSwift),
    .executableTarget(
      name: "nearby",
      dependencies: [
        "Core", "Resolution", "MediumTestKit", "Strategy", "Tokens", "AudioModem",
        "AudioModemTestKit", "AudioPulse",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Tools/nearby",
      swiftSettings: strictSwift
    ),
    .testTarget(name: "StrategyTests", dependencies: ["Strategy"], swiftSettings: strictSwift),
    .testTarget(name: "TokensTests", dependencies: ["Tokens"], swiftSettings: strictSwift),
    .testTarget(
      name: "CoreTests",
      dependencies: ["Core", "Strategy", "Tokens", "MediumTestKit", "Resolution"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "ResolutionTests",
      dependencies: ["Resolution", "Core", "Strategy", "Tokens"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "MediumTestKitTests",
      dependencies: ["MediumTestKit", "Core", "Strategy", "Tokens"],
      swiftSettings: strictSwift
    ),
    .testTarget(
      name: "AudioModemTests", dependencies: ["AudioModem", "AudioModemTestKit", "Tokens"],
      swiftSettings: strictSwift),
    .testTarget(
      name: "AudioPulseTests",
      dependencies: [
        "AudioPulse", "AudioModem", "Core", "MediumTestKit", "Resolution", "Strategy", "Tokens",
        .product(name: "Logging", package: "swift-log"),
      ],
      swiftSettings: strictSwift),
    .testTarget(
      name: "IntegrationTests",
      dependencies: ["Core", "Resolution", "MediumTestKit", "Strategy", "Tokens"],
      swiftSettings: strictSwift
    ),
  ]
)
