"""The course secret, and the per-submission salt of the hidden inputs derived from it.

Hidden inputs are drawn from generators seeded by the check and this salt, so they differ
between students and between two versions of one student's notebook, and repeat exactly when
the same notebook is graded again. A table of inputs and answers harvested from one grading
run is worth nothing for any other submission. The secret is made on first use and lives only
in the course directory (`.attnlab/secret`, mode 0600, ignored by git); it is never part of a
release, of feedback, or of what student code can read.
"""
import hashlib
import hmac
import os
import secrets
from pathlib import Path

from . import student_files

SECRET_BYTES = 32


def course_secret(root: Path) -> bytes:
    """The secret of the course at `root`, created (atomically, private) on first use."""
    path = Path(root) / ".attnlab" / "secret"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"secret.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(SECRET_BYTES) + "\n")
        try:
            os.link(tmp, path)           # the first writer wins; everyone reads the same secret
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    secret = bytes.fromhex(path.read_text().strip())
    if len(secret) < 16:
        raise ValueError(f"{path} holds no usable secret; delete it to make a new one")
    return secret


def salt(secret: bytes, assignment: str, student: str, notebook: bytes) -> bytes:
    """The salt of one submission: the assignment, the student and the notebook's content."""
    digest = hashlib.sha256(notebook).hexdigest()
    return hmac.new(secret, f"{assignment}\0{student}\0{digest}".encode(), hashlib.sha256).digest()


def submission_salt(secret: bytes, assignment: str, student: str, path: Path) -> bytes:
    """`salt` of the notebook at `path` (of no bytes if it is missing)."""
    try:
        return salt(secret, assignment, student, student_files.read(path))
    except OSError:     # missing, a link, not a regular file: graded as unreadable
        return salt(secret, assignment, student, b"")
