// swift-tools-version: 6.1
import PackageDescription

let package = Package(
  name: "Repro",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
  ],
  targets: [
    .executableTarget(
      name: "Repro",
      dependencies: [
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    )
  ]
)
