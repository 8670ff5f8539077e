#!/usr/bin/python3
# A probe of real bluetoothd's device lifetime under discovery; see probe-presence.sh.
import dbus, time, sys, subprocess
advert = sys.argv[1]
t0 = time.monotonic()
def say(text): print(f"{time.monotonic() - t0:7.1f} s  {text}", flush=True)
# Two clients: bluetoothd counts discovery sessions per D-Bus connection.
a = dbus.SystemBus(private=True)
b = dbus.SystemBus(private=True)
def adapter(bus, name="hci1"):
    return dbus.Interface(bus.get_object("org.bluez", f"/org/bluez/{name}"), "org.bluez.Adapter1")
def devices():
    objs = dbus.Interface(a.get_object("org.bluez", "/"), "org.freedesktop.DBus.ObjectManager").GetManagedObjects()
    return {str(p): i["org.bluez.Device1"] for p, i in objs.items()
            if "org.bluez.Device1" in i and str(p).startswith("/org/bluez/hci1/")}
def discovering():
    return bool(dbus.Interface(a.get_object("org.bluez", "/org/bluez/hci1"), "org.freedesktop.DBus.Properties").Get("org.bluez.Adapter1", "Discovering"))
def describe():
    d = devices()
    if not d: return "no device"
    return "; ".join(f"{p.rsplit('/', 1)[1]} RSSI={int(v['RSSI']) if 'RSSI' in v else 'none'}" for p, v in d.items())
def watch(seconds, label):
    last = None
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        now = f"{describe()}, Discovering={discovering()}"
        if now != last: say(f"[{label}] {now}"); last = now
        time.sleep(0.5)
def mgmt(*args):
    r = subprocess.run(["btmgmt", "--index", "0", *args], capture_output=True, text=True)
    say(f"btmgmt {' '.join(args[:1])}: {(r.stdout + r.stderr).strip().splitlines()[-1:]}")
def filt(bus): adapter(bus).SetDiscoveryFilter({"Transport": "le", "DuplicateData": dbus.Boolean(True)})

say("client A: SetDiscoveryFilter le+dup, StartDiscovery on hci1")
filt(a); adapter(a).StartDiscovery()
mgmt("add-adv", "-d", advert, "1")
watch(50, "advert repeating unchanged, discovery on")
mgmt("rm-adv", "1")
watch(45, "advert stopped, discovery on")
mgmt("add-adv", "-d", advert, "1")
watch(5, "advert back")
say("client B: SetDiscoveryFilter le+dup, StartDiscovery on hci1")
filt(b); adapter(b).StartDiscovery()
watch(3, "A and B discovering")
say("client A: StopDiscovery")
adapter(a).StopDiscovery()
watch(6, "only B discovering")
say("client B: StopDiscovery")
adapter(b).StopDiscovery()
watch(4, "nobody discovering")
say("client A: StartDiscovery again, then the advert stops while A's session continues, then A leaves the bus without StopDiscovery")
filt(a); adapter(a).StartDiscovery()
watch(4, "A discovering again")
a.close()
a = dbus.SystemBus(private=True)
watch(4, "A's connection closed")
mgmt("rm-adv", "1")
