# redteam: overwrites the gradebook from the kernel (the FIELD-NOTES exploit that scored 21/9)
# kind: kernel
# message: notebook: done
# why: the kernel runs as its own uid in a mount namespace where every course's gradebook.db is /dev/null (or, when the course lies under /tmp, absent from the private /tmp): the write goes nowhere, and the real gradebook (checked by the test) is intact
import glob
import os
KIT = os.environ.get("PYTHONPATH", ".").split(os.pathsep)[0]   # the kit doing the grading

for db in glob.glob("../../../*.db") + glob.glob(KIT + "/*.db") + glob.glob("/tmp/**/gradebook.db", recursive=True):
    try:
        with open(db, "wb") as f:
            f.write(b"21/9")
        print("gradebook now:", open(db, "rb").read(16))
    except OSError as e:
        print("refused:", e)
print("done")
