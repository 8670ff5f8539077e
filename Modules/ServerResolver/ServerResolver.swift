// The old name of ResolverClient: an app that imports ServerResolver keeps building, and the
// compiler's deprecation warning names the new spelling. Nothing but the re-export lives here.
@_exported public import ResolverClient

/// The resolver server's client, under its old name.
@available(*, deprecated, renamed: "ResolverClient", message: "import ResolverClient instead")
public typealias ServerResolver = ResolverClient
