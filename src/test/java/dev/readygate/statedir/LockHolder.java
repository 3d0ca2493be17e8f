package dev.readygate.statedir;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;

/**
 * Another readygate's state directory, in a process of its own: takes the lock on the directory given as the
 * argument, prints {@code locked}, and holds it until its standard input closes or it is killed.
 */
public final class LockHolder {

    private LockHolder() {}

    public static void main(String[] args) throws IOException {
        StateDir stateDir = new StateDir(Path.of(args[0]), Clock.systemUTC());
        if (!stateDir.writer()) {
            System.out.println("not locked");
            System.exit(1);
        }
        System.out.print("locked\n");
        System.out.flush();
        System.in.read();
        stateDir.close();
    }
}
