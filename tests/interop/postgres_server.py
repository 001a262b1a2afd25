"""Debian's PostgreSQL server for one test, as postgres.js starts it for the
Node.js tests: initdb and postgres from /usr/lib/postgresql/15/bin (as user
postgres when run as root: the server refuses root), a cluster in a
temporary directory, the socket there and no TCP. Every wait is on a
condition (waits.py).

    pg = PostgresServer()            # started; sys.exit with a message if it cannot be
    uri = pg.new_database()          # postgresql://keyhook@/dbN?host=DIR&port=PORT
    pg.sql(uri, "SELECT 1")          # rows as tuples of strings (psql)
    pg.halt()                        # fast shutdown, data kept (clients see errors)
    pg.start()                       # started again on the same data
    pg.stop()                        # halted, directory removed

available() says whether the server is installed."""
import os
import shutil
import subprocess
import sys
import tempfile

from waits import BOUND, stop, wait_until

PG_BIN = "/usr/lib/postgresql/15/bin"


def available():
    return os.path.exists(os.path.join(PG_BIN, "postgres"))


class PostgresServer:
    def __init__(self, prefix="keyhook-pg-"):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.as_pg = []
        if os.geteuid() == 0:
            import pwd
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.as_pg = ["runuser", "-u", "postgres", "--"]
        self.data = os.path.join(self.dir, "data")
        self.count = 0
        self.server = None
        subprocess.run([*self.as_pg, PG_BIN + "/initdb", "-D", self.data, "-U", "keyhook", "--auth=trust", "-E",
                        "UTF8", "--no-sync", "--no-instructions"], check=True, capture_output=True,
                       timeout=BOUND * 4)
        self.port = str(40000 + os.getpid() % 10000)  # names the socket only (no TCP)
        if not self.start():
            self.stop()
            sys.exit("postgres did not accept connections")

    def ready(self):
        return subprocess.run([PG_BIN + "/pg_isready", "-h", self.dir, "-p", self.port],
                              capture_output=True).returncode == 0

    def start(self):
        """Starts the server on its data; true once it accepts connections."""
        self.server = subprocess.Popen([*self.as_pg, PG_BIN + "/postgres", "-D", self.data, "-k", self.dir, "-p",
                                        self.port, "-c", "listen_addresses=", "-c", "fsync=off"],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return wait_until(self.ready)

    def halt(self):
        """Fast shutdown (SIGINT to the postmaster itself: runuser does not pass signals on)."""
        if not self.server:
            return
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                os.kill(int(f.readline()), 2)
        except (OSError, ValueError):
            self.server.kill()
        stop(self.server)
        self.server = None

    def uri(self, name):
        return "postgresql://keyhook@/%s?host=%s&port=%s" % (name, self.dir, self.port)

    def new_database(self):
        self.count += 1
        name = "db%d" % self.count
        subprocess.run([PG_BIN + "/createdb", "-h", self.dir, "-p", self.port, "-U", "keyhook", name], check=True,
                       capture_output=True, timeout=BOUND)
        return self.uri(name)

    def sql(self, uri, text):
        """Runs SQL on the database `uri` names; the rows as tuples of strings."""
        name = uri.split("?")[0].rsplit("/", 1)[1]
        r = subprocess.run([PG_BIN + "/psql", "-h", self.dir, "-p", self.port, "-U", "keyhook", "-qAt", "-F", "\t",
                            "-v", "ON_ERROR_STOP=1", "-c", text, name],
                           capture_output=True, text=True, timeout=BOUND, check=True)
        return [tuple(line.split("\t")) for line in r.stdout.splitlines() if line]

    def stop(self):
        self.halt()
        shutil.rmtree(self.dir, ignore_errors=True)
