# Network namespaces for the LAN medium's multi-host tests (Tools/scripts/netns.sh has the
# topology). Names carry this shell's pid so parallel runs do not meet. Exports
# NEARBY_TEST_NETNS (the prefix), or NEARBY_TEST_NETNS_SKIP with the reason when namespaces
# cannot be made here (not root, no ip or nft), so the tests say why they are skipped.
start_netns() {
  local prefix="nbt$$" reason=""
  if [ "$(id -u)" -ne 0 ]; then
    reason="network namespaces need root (CI runs as root)"
  elif ! command -v ip >/dev/null 2>&1 || ! command -v nft >/dev/null 2>&1; then
    reason="ip (iproute2) or nft (nftables) is missing; run Tools/scripts/install-deps.sh build test"
  elif ! ip netns add "$prefix-probe" 2>/dev/null; then
    reason="ip netns add failed: this machine does not allow creating network namespaces"
  else
    ip netns delete "$prefix-probe"
  fi
  if [ -n "$reason" ]; then
    export NEARBY_TEST_NETNS_SKIP="$reason"
    echo "network namespaces: the multi-host tests will be skipped: $reason" >&2
    return 0
  fi
  on_exit "Tools/scripts/netns.sh down $prefix"
  Tools/scripts/netns.sh up "$prefix"
  export NEARBY_TEST_NETNS="$prefix"
  echo "network namespaces $prefix-{srv,a,b,c,hub}" >&2
}
start_netns
