# redteam: sleeps forever in the kernel and swallows KeyboardInterrupt (FIELD-NOTES: failed the whole notebook)
# kind: kernel
# message: notebook: [kit] execution stopped
# why: the cell times out, the interrupt is ignored, SafeExecute gives up on the kernel and kills its job; grading is unaffected
import time

while True:
    try:
        time.sleep(0.5)
    except KeyboardInterrupt:
        pass
