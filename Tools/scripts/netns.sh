#!/usr/bin/env bash
# Network namespaces for the LAN medium's multi-host tests and benchmark (root only):
#   Tools/scripts/netns.sh up PREFIX     makes PREFIX-srv, PREFIX-a, PREFIX-b, PREFIX-c, PREFIX-hub
#   Tools/scripts/netns.sh down PREFIX   deletes them
# Four "hosts" (srv, a, b, c) and a "hub" whose bridge is their LAN. a and b each have two
# links: wan0 to srv (point-to-point, for the resolver's HTTP) and lan0 to the hub's bridge
# (the LAN medium's segment), so a test can cut the LAN (link down) and keep the resolver.
# c has lan0 only: a third host on the segment for peer resolution (no server anywhere).
#
#   srv: s-a 10.70.1.1/30 <-> a: wan0 10.70.1.2/30     s-b 10.70.2.1/30 <-> b: wan0 10.70.2.2/30
#   hub: br0 (no multicast snooping): h-a <-> a: lan0 10.80.0.2/24, h-b <-> b: lan0 10.80.0.3/24,
#        h-c <-> c: lan0 10.80.0.4/24
#
# Everything is made inside the namespaces: nothing is added to the machine's own network.
set -euo pipefail
action=${1:?usage: netns.sh up|down PREFIX}
prefix=${2:?usage: netns.sh up|down PREFIX}

down() { for ns in srv a b c hub; do ip netns delete "$prefix-$ns" 2>/dev/null || true; done; }

case "$action" in
down) down ;;
up)
  trap 'down' ERR
  for ns in srv a b c hub; do
    ip netns add "$prefix-$ns"
    ip -n "$prefix-$ns" link set lo up
  done
  ip -n "$prefix-hub" link add br0 type bridge mcast_snooping 0
  ip -n "$prefix-hub" link set br0 up
  for host in a b; do
    net=1
    [ "$host" = b ] && net=2
    ip -n "$prefix-srv" link add "s-$host" type veth peer name wan0 netns "$prefix-$host"
    ip -n "$prefix-srv" addr add "10.70.$net.1/30" dev "s-$host"
    ip -n "$prefix-srv" link set "s-$host" up
    ip -n "$prefix-$host" addr add "10.70.$net.2/30" dev wan0
    ip -n "$prefix-$host" link set wan0 up
    ip -n "$prefix-hub" link add "h-$host" type veth peer name lan0 netns "$prefix-$host"
    ip -n "$prefix-hub" link set "h-$host" master br0 up
    ip -n "$prefix-$host" addr add "10.80.0.$((net + 1))/24" dev lan0
    ip -n "$prefix-$host" link set lan0 up
  done
  ip -n "$prefix-hub" link add h-c type veth peer name lan0 netns "$prefix-c"
  ip -n "$prefix-hub" link set h-c master br0 up
  ip -n "$prefix-c" addr add 10.80.0.4/24 dev lan0
  ip -n "$prefix-c" link set lan0 up
  ;;
*)
  echo "usage: netns.sh up|down PREFIX" >&2
  exit 64
  ;;
esac
