#!/usr/bin/python3
# A probe of what reaches a scanner from a still advert; see probe-monitor.sh.
#   probe-monitor.py --phases all|NAME,... ADVERT     the timeline (wall clock, as btmon -T)
#   probe-monitor.py --summary TIMELINE BTMON         btmon's lines counted per phase
import datetime, re, subprocess, sys, time

def stamp():
    return datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3]

def say(text):
    print(f"{stamp()}  {text}", flush=True)

# The monitor variants: the medium's RSSI settings (Plugins/BLEBlueZ/BlueZObjects.swift) and
# others. A key left out is unset.
OURS = {"RSSIHighThreshold": ("n", -127), "RSSIHighTimeout": ("q", 1),
        "RSSILowThreshold": ("n", -127), "RSSILowTimeout": ("q", 10),
        "RSSISamplingPeriod": ("q", 0)}
VARIANTS = {
    "ours": OURS,
    "unset": {},
    "low60": {**OURS, "RSSILowTimeout": ("q", 60)},
    "high0": {k: v for k, v in OURS.items() if k != "RSSIHighTimeout"},
    "sampling-unset": {k: v for k, v in OURS.items() if k != "RSSISamplingPeriod"},
}

def summary(timeline_path, btmon_path):
    """Counts btmon's interesting lines (hci1's reports, scan commands, mgmt events) per phase
    of the timeline (a phase starts at a line `== phase NAME`)."""
    def seconds(hms):
        h, m, s = hms.split(":")
        return int(h) * 3600 + int(m) * 60 + float(s)
    phases = []
    for line in open(timeline_path, errors="replace"):
        m = re.match(r"(\d\d:\d\d:\d\d\.\d+)  == phase (\S+)", line)
        if m:
            phases.append((seconds(m.group(1)), m.group(2)))
    if not phases:
        print("summary: no phase in the timeline")
        return 1
    kinds = ["LE Advertising Report (hci1)", "LE Set Scan Enable: Enabled",
             "LE Set Scan Enable: Disabled", "LE Set Scan Parameters", "MGMT Device Found",
             "MGMT ADV Monitor Device Found", "MGMT ADV Monitor Device Lost"]
    counts = {name: {k: 0 for k in kinds} for _, name in phases}
    events = []
    # btmon -T: "< HCI Command: LE Set Scan Enable (0x08|0x000c) plen 2   #12 [hci1] 2026-11-25 21:59:01.123456"
    header = re.compile(r"^([<>@=] .*?)\s+(?:\{0x[0-9a-f]+\} )?(?:#\d+ )?\[(hci\d+)\] \S+ (\d\d:\d\d:\d\d\.\d+)\s*$")
    def phase_at(t):
        name = None
        for start, n in phases:
            if t >= start:
                name = n
        return name
    def note(name, t, hci, kind, detail=""):
        counts[name][kind] += 1
        events.append((t, hci, kind + detail))
    def close(block):
        if block is None:
            return
        t, hci, head, body = block
        name = phase_at(t)
        if name is None:
            return
        text = " ".join(body)
        if head.startswith("< HCI Command: LE Set") and "Scan Enable" in head:
            state = "Enabled" if "Scanning: Enabled" in text else "Disabled"
            dup = re.search(r"Filter duplicates: (\w+)", text)
            note(name, t, hci, f"LE Set Scan Enable: {state}",
                 f", filter duplicates {dup.group(1) if dup else '?'}")
        elif head.startswith("< HCI Command: LE Set") and "Scan Parameters" in head:
            kind = re.search(r"Type: (\w+)", text)
            note(name, t, hci, "LE Set Scan Parameters", f", type {kind.group(1) if kind else '?'}")
        elif head.startswith("> HCI Event: LE Meta Event") and "Advertising Report" in text and hci == "hci1":
            addr = re.search(r"Address: (\S+)", text)
            note(name, t, hci, "LE Advertising Report (hci1)", f" from {addr.group(1) if addr else '?'}")
        elif head.startswith("@ MGMT Event:"):
            for kind in kinds:
                if kind.startswith("MGMT") and head.startswith(f"@ MGMT Event: {kind[5:]} ("):
                    note(name, t, hci, kind)
    block = None
    for line in open(btmon_path, errors="replace"):
        m = header.match(line)
        if m:
            close(block)
            block = (seconds(m.group(3)), m.group(2), m.group(1), [])
        elif block is not None:
            block[3].append(line.strip())
    close(block)
    print("\n== btmon, per phase (reports: on hci1)")
    for _, name in phases:
        print(f"{name}: " + ", ".join(f"{k} {v}" for k, v in counts[name].items()))
    print("\n== btmon, events (reports on hci1, scan commands, mgmt events)")
    for t, hci, what in events:
        print(f"{int(t // 3600):02d}:{int(t % 3600 // 60):02d}:{t % 60:06.3f} [{hci}] {what}  (phase {phase_at(t)})")
    return 0

if sys.argv[1] == "--summary":
    sys.exit(summary(sys.argv[2], sys.argv[3]))

import dbus, dbus.service, dbus.mainloop.glib
from gi.repository import GLib

wanted = sys.argv[2]
advert = sys.argv[3]
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
MON = "org.bluez.AdvertisementMonitor1"

def short(path):
    return str(path).rsplit("/", 1)[-1]

class Monitor(dbus.service.Object):
    def __init__(self, path, name, rssi):
        self.path, self.name = path, name
        self.props = {
            "Type": dbus.String("or_patterns"),
            "Patterns": dbus.Array(
                [dbus.Struct((dbus.Byte(0), dbus.Byte(0x16),
                              dbus.Array([dbus.Byte(0xAA), dbus.Byte(0xFE)], signature="y")),
                             signature="yyay")], signature="(yyay)"),
        }
        for key, (sig, value) in rssi.items():
            self.props[key] = dbus.Int16(value) if sig == "n" else dbus.UInt16(value)
        super().__init__(bus, path)

    @dbus.service.method(MON)
    def Release(self): say(f"[{self.name}] Release")

    @dbus.service.method(MON)
    def Activate(self): say(f"[{self.name}] Activate")

    @dbus.service.method(MON, in_signature="o")
    def DeviceFound(self, path): say(f"[{self.name}] DeviceFound {short(path)}")

    @dbus.service.method(MON, in_signature="o")
    def DeviceLost(self, path): say(f"[{self.name}] DeviceLost {short(path)}")

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="ss", out_signature="v")
    def Get(self, interface, name): return self.props[name]

    @dbus.service.method("org.freedesktop.DBus.Properties", in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface): return self.props

class App(dbus.service.Object):
    def __init__(self, path, monitor):
        self.monitor = monitor
        super().__init__(bus, path)

    @dbus.service.method("org.freedesktop.DBus.ObjectManager", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return {dbus.ObjectPath(self.monitor.path): {MON: self.monitor.props}}

def obj(path): return bus.get_object("org.bluez", path)
def adapter(): return dbus.Interface(obj("/org/bluez/hci1"), "org.bluez.Adapter1")
manager = dbus.Interface(obj("/org/bluez/hci1"), "org.bluez.AdvertisementMonitorManager1")

def mgmt(*args):
    # btmgmt quits at the end of its input (findings J): keep a pipe open while it runs.
    p = subprocess.Popen(["btmgmt", "--index", "0", *args], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text = p.stdout.read()
    p.wait()
    p.stdin.close()
    say(f"btmgmt --index 0 {' '.join(args)}: {text.strip().splitlines()[-1:]}")

def on_props(interface, changed, invalidated, path=None):
    if not (path.startswith("/org/bluez/hci1/dev_") or path == "/org/bluez/hci1"):
        return
    parts = []
    for k, v in changed.items():
        if k in ("RSSI", "Discovering", "TxPower"):
            parts.append(f"{k}={int(v) if k != 'Discovering' else bool(v)}")
        else:
            parts.append(k)
    if invalidated:
        parts.append(f"invalidated {list(map(str, invalidated))}")
    say(f"PropertiesChanged {short(path)} {interface.rsplit('.', 1)[-1]}: {', '.join(parts)}")

def on_added(path, interfaces):
    if str(path).startswith("/org/bluez/hci1/dev_"):
        dev = interfaces.get("org.bluez.Device1", {})
        say(f"InterfacesAdded {short(path)} RSSI={int(dev['RSSI']) if 'RSSI' in dev else 'none'}")

def on_removed(path, interfaces):
    if str(path).startswith("/org/bluez/hci1/dev_"):
        say(f"InterfacesRemoved {short(path)}")

bus.add_signal_receiver(on_props, signal_name="PropertiesChanged",
                        dbus_interface="org.freedesktop.DBus.Properties", bus_name="org.bluez",
                        path_keyword="path")
bus.add_signal_receiver(on_added, signal_name="InterfacesAdded",
                        dbus_interface="org.freedesktop.DBus.ObjectManager", bus_name="org.bluez")
bus.add_signal_receiver(on_removed, signal_name="InterfacesRemoved",
                        dbus_interface="org.freedesktop.DBus.ObjectManager", bus_name="org.bluez")

def devices():
    objs = dbus.Interface(obj("/"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
    return [short(p) for p in objs if str(p).startswith("/org/bluez/hci1/dev_")]

def remove_devices():
    # Each phase starts from no device object, as a fresh scan would.
    for d in devices():
        adapter().RemoveDevice(dbus.ObjectPath(f"/org/bluez/hci1/{d}"))
        say(f"RemoveDevice {d}")

def call(method, path):
    name = method._method_name
    say(f"{name} {path}")
    method(dbus.ObjectPath(path), reply_handler=lambda: say(f"{name} {path}: answered"),
           error_handler=lambda error: say(f"{name} {path}: error {error!r}"))

counter = [0]
def monitor_phase(variant, seconds, advert_first=True):
    counter[0] += 1
    root = f"/probe/app{counter[0]}"
    say(f"== phase monitor-{variant}{'' if advert_first else '-scan-first'} "
        f"(RSSI settings {VARIANTS[variant]})")
    mon = Monitor(f"{root}/m0", variant, VARIANTS[variant])
    app = App(root, mon)
    if not advert_first:
        mgmt("rm-adv", "1")
        yield 1
    # Asynchronous: bluetoothd reads our objects (GetManagedObjects) before it answers, and
    # this loop must be free to serve that call.
    call(manager.RegisterMonitor, root)
    if not advert_first:
        yield 3
        mgmt("add-adv", "-d", advert, "1")
    yield seconds
    call(manager.UnregisterMonitor, root)
    yield 1
    say(f"devices now {devices()}")
    mon.remove_from_connection()
    app.remove_from_connection()
    yield 2
    remove_devices()
    yield 1

def discovery_phase(with_monitor=False):
    name = "discovery-monitor" if with_monitor else "discovery"
    say(f"== phase {name} (SetDiscoveryFilter le + DuplicateData, StartDiscovery on hci1"
        f"{', and a monitor without RSSI settings' if with_monitor else ''})")
    if with_monitor:
        counter[0] += 1
        root = f"/probe/app{counter[0]}"
        mon = Monitor(f"{root}/m0", "unset", VARIANTS["unset"])
        app = App(root, mon)
        call(manager.RegisterMonitor, root)
        yield 2
    adapter().SetDiscoveryFilter({"Transport": "le", "DuplicateData": dbus.Boolean(True)})
    adapter().StartDiscovery()
    yield 45
    say(f"== phase {name}-stopped (the advert removed: btmgmt rm-adv 1)")
    mgmt("rm-adv", "1")
    yield 45
    adapter().StopDiscovery()
    say("StopDiscovery")
    yield 2
    if with_monitor:
        call(manager.UnregisterMonitor, root)
        yield 1
        mon.remove_from_connection()
        app.remove_from_connection()
    remove_devices()
    mgmt("add-adv", "-d", advert, "1")
    yield 2

PHASES = {  # in the order "all" runs them
    "monitor-ours": lambda: monitor_phase("ours", 35),
    "monitor-unset": lambda: monitor_phase("unset", 30),
    "monitor-high0": lambda: monitor_phase("high0", 30),
    "monitor-low60": lambda: monitor_phase("low60", 30),
    "monitor-sampling-unset": lambda: monitor_phase("sampling-unset", 30),
    "monitor-ours-scan-first": lambda: monitor_phase("ours", 30, advert_first=False),
    "discovery": discovery_phase,
    "discovery-monitor": lambda: discovery_phase(with_monitor=True),
}

def script():
    say(f"devices at the start: {devices()}")
    mgmt("add-adv", "-d", advert, "1")
    yield 2
    for name in PHASES if wanted == "all" else wanted.split(","):
        yield from PHASES[name]()
    say("== phase end")
    mgmt("clr-adv")

loop = GLib.MainLoop()
steps = script()
def step():
    try:
        GLib.timeout_add(int(next(steps) * 1000), step)
    except StopIteration:
        loop.quit()
    except Exception as error:
        say(f"error: {error!r}")
        loop.quit()
    return False
GLib.idle_add(step)
loop.run()
