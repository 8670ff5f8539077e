#!/usr/bin/python3
# A probe of real bluetoothd (error names, Device1 properties, timing); see probe-bluetoothd.sh.
import dbus, time, json, sys, subprocess
bus = dbus.SystemBus()
def obj(p): return bus.get_object("org.bluez", p)
a0 = dbus.Interface(obj("/org/bluez/hci0"), "org.bluez.Adapter1")
a1 = dbus.Interface(obj("/org/bluez/hci1"), "org.bluez.Adapter1")
def attempt(label, f):
    try:
        r = f(); print(f"{label}: ok {r!r}")
    except Exception as e:
        if not isinstance(e, dbus.DBusException): print(f"{label}: python {e!r}"); return
        print(f"{label}: {e.get_dbus_name()}: {e.get_dbus_message()}")
attempt("GetDiscoveryFilters", lambda: list(a1.GetDiscoveryFilters()))
attempt("StopDiscovery before start", lambda: a1.StopDiscovery())
attempt("SetDiscoveryFilter bad key", lambda: a1.SetDiscoveryFilter({"Bogus": dbus.Boolean(True)}))
attempt("SetDiscoveryFilter Transport=bogus", lambda: a1.SetDiscoveryFilter({"Transport": "bogus"}))
attempt("SetDiscoveryFilter le+dup", lambda: a1.SetDiscoveryFilter({"Transport": "le", "DuplicateData": dbus.Boolean(True)}))
t0 = time.monotonic()
attempt("StartDiscovery", lambda: a1.StartDiscovery())
print(f"StartDiscovery took {1000*(time.monotonic()-t0):.0f} ms")
attempt("StartDiscovery again (same client)", lambda: a1.StartDiscovery())
lam = dbus.Interface(obj("/org/bluez/hci0"), "org.bluez.LEAdvertisingManager1")
attempt("RegisterAdvertisement of a path we do not export", lambda: lam.RegisterAdvertisement("/org/nearby/none", dbus.Dictionary({}, signature="sv")))
attempt("UnregisterAdvertisement never registered", lambda: lam.UnregisterAdvertisement("/org/nearby/none"))
mon = dbus.Interface(obj("/org/bluez/hci0"), "org.bluez.AdvertisementMonitorManager1")
attempt("RegisterMonitor without an ObjectManager", lambda: mon.RegisterMonitor("/org/nearby/none"))
attempt("UnregisterAdvertisement of a path never registered", lambda: lam.UnregisterAdvertisement("/org/nearby/never"))
attempt("UnregisterMonitor of a root never registered", lambda: mon.UnregisterMonitor("/org/nearby/never"))
attempt("Get Powered on missing adapter", lambda: dbus.Interface(obj("/org/bluez/hci9"), "org.freedesktop.DBus.Properties").Get("org.bluez.Adapter1", "Powered"))
print("adding the Eddystone advert on hci0 with btmgmt")
t_add = time.monotonic()
subprocess.run(["btmgmt", "--index", "0", "add-adv", "-d", sys.argv[1], "1"], check=False)
seen = None
for _ in range(100):
    objs = dbus.Interface(obj("/"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
    devs = {p: i["org.bluez.Device1"] for p, i in objs.items() if "org.bluez.Device1" in i and str(p).startswith("/org/bluez/hci1/")}
    if devs: seen = devs; break
    time.sleep(0.1)
print(f"first Device1 under hci1 after add-adv: {1000*(time.monotonic()-t_add):.0f} ms" if seen else "no Device1 under hci1 in 10 s")
def plain(v):
    if isinstance(v, dbus.Array) and v.signature == "y": return bytes(v).hex()
    if isinstance(v, (dbus.Dictionary, dict)): return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (dbus.Array, list)): return [plain(x) for x in v]
    if isinstance(v, dbus.Boolean): return bool(v)
    if isinstance(v, (dbus.Int16, dbus.Int32, dbus.UInt16, dbus.UInt32, dbus.Byte, int)): return f"{int(v)} ({type(v).__name__})"
    return str(v)
for p, d in (seen or {}).items():
    print(p); print(json.dumps(plain(d), indent=1))
time.sleep(6)
attempt("StopDiscovery", lambda: a1.StopDiscovery())
attempt("StopDiscovery again", lambda: a1.StopDiscovery())

# Advertising on an adapter that is itself scanning (docs/bluez-vm-findings.md item D): with
# discovery (active scan) on hci0, add an advert on hci0 through mgmt, as bluetoothd would.
a0_adv = sys.argv[1]
subprocess.run(["btmgmt", "--index", "0", "rm-adv", "1"], capture_output=True)  # no advert left
attempt("hci0 SetDiscoveryFilter le+dup", lambda: a0.SetDiscoveryFilter({"Transport": "le", "DuplicateData": dbus.Boolean(True)}))
attempt("hci0 StartDiscovery", lambda: a0.StartDiscovery())
time.sleep(1)
r = subprocess.run(["btmgmt", "--index", "0", "add-adv", "-d", a0_adv, "2"], capture_output=True, text=True)
print(f"btmgmt add-adv on hci0 while hci0 discovers: {(r.stdout + r.stderr).strip()}")
attempt("hci0 StopDiscovery", lambda: a0.StopDiscovery())
subprocess.run(["btmgmt", "--index", "0", "rm-adv", "2"], capture_output=True)
subprocess.run(["sh", "-c", "dmesg | grep 'Bluetooth: hci' || true"])
