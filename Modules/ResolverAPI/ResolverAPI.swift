// The resolver's HTTP API, generated from openapi.yaml (the file beside this one, the one source
// of the contract) by swift-openapi-generator (types, the server protocol and the client) into
// GeneratedSources/, committed: Tools/scripts/openapi-generate.sh writes it, the test command
// checks it is current. Used by the server (NearbyServer) and the library's client
// (ResolverClient).
