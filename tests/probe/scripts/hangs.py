"""Never finishes: starts a helper process, then waits forever before any training step."""
import subprocess
import sys
import time

helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(sys.argv[1], "w") as handle:
    handle.write(str(helper.pid))
while True:
    time.sleep(0.5)
# expect: skip (a fault fixture: never trains, needs a pid file path)
