/// A command that could not do its work: ArgumentParser prints "Error: <description>" and
/// exits with status 1. Shared by the executables under Tools/ (`nearby`, `nearby-server`,
/// `nearby-bench`); not a product.
public struct CommandFailure: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
