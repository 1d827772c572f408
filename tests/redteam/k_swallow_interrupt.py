# redteam: sleeps forever in the kernel and swallows KeyboardInterrupt (FIELD-NOTES: failed the whole notebook)
# kind: kernel
# message: notebook: [kit] execution stopped
# why: the cell times out, the interrupt is ignored, SafeExecute gives up on the kernel and kills its job; grading is unaffected
import signal
import time

# Ignored, not only caught: an interrupt that lands between two statements (outside the try, on a
# loaded machine) would otherwise end the loop now and then, and the case would test nothing.
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    try:
        time.sleep(0.5)
    except KeyboardInterrupt:
        pass
