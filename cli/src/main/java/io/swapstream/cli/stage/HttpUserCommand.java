package io.swapstream.cli.stage;

import io.swapstream.http.HttpUsers;
import io.swapstream.local.UserInputException;
import java.io.BufferedReader;
import java.io.Console;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code swapstream http-user NAME}: a line of a {@code --http-users} file, the password asked for (or read from stdin). */
@Command(name = "http-user", description = "Print a line for a --http-users file: NAME and a salted hash of the password"
        + " typed (twice, on a terminal) or the first line of standard input.")
public final class HttpUserCommand implements Callable<Integer> {
    @Spec CommandSpec spec;

    @Parameters(paramLabel = "NAME", description = "the user's name (no ':')")
    String name;

    @Override
    public Integer call() throws IOException {
        if (name.isEmpty() || name.contains(":")) throw new UserInputException("NAME: '" + name + "' is empty or holds ':'");
        char[] password;
        Console console = System.console();
        if (console != null) {
            password = console.readPassword("password for %s: ", name);
            char[] again = console.readPassword("again: ");
            if (password == null || !Arrays.equals(password, again)) throw new UserInputException("the two passwords differ");
        } else {
            String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            if (line == null) throw new UserInputException("no password on standard input");
            password = line.toCharArray();
        }
        if (password.length == 0) throw new UserInputException("an empty password");
        spec.commandLine().getOut().println(HttpUsers.line(name, password));
        return 0;
    }
}
