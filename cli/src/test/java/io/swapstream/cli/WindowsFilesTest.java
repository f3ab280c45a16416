package io.swapstream.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.swapstream.ingest.WatchedFolder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import picocli.CommandLine;

/**
 * What the project ships for Windows hosts (windows/), checked here, as nothing of it can run here: the WinSW
 * configuration against the element names WinSW 2.12.0 reads, the collection script's commands against the
 * options docs/collecting.md gives and Microsoft documents, and collecting.md's commands against the pages it cites.
 */
class WindowsFilesTest {
    static final Path WINDOWS = CliRunner.REPOSITORY.resolve("windows");
    static final Path SCRIPT = WINDOWS.resolve("swapstream-collect.ps1");
    static final Path WINSW = WINDOWS.resolve("swapstream-ingest.xml");
    static final Path DOC = CliRunner.REPOSITORY.resolve("docs/collecting.md");

    /**
     * Every element name WinSW 2.12.0 reads from its XML: src/WinSW.Core/Configuration/XmlServiceConfig.cs at tag
     * v2.12.0 (commit eef5bade59fca0254e387ac73ed7625ba6aa7147), its SingleElement, SingleBoolElement,
     * SingleTimeSpanElement, SingleIntElement, SelectSingleNode, SelectNodes, AppendTags and GetServiceAccountPart
     * calls, and the root. An element not here is ignored by WinSW without a word (as 3.x's
     * {@code <serviceaccount><username>} is by 2.12, which then installs the service as LocalSystem).
     */
    static final Set<String> WINSW_2_12_ELEMENTS = Set.of("service", "id", "name", "description", "executable", "arguments",
            "argument", "startarguments", "startargument", "stoparguments", "stopargument", "stopexecutable", "workingdirectory",
            "extensions", "extension", "logpath", "logmode", "log", "sizeThreshold", "keepFiles", "period", "pattern",
            "autoRollAtTime", "zipOlderThanNumDays", "zipDateFormat", "outfiledisabled", "errfiledisabled", "outfilepattern",
            "errfilepattern", "logname", "depend", "startmode", "delayedAutoStart", "beeponshutdown", "waithint", "sleeptime",
            "interactive", "download", "onfailure", "resetfailure", "serviceaccount", "domain", "user", "password",
            "allowservicelogon", "stoptimeout", "stopparentprocessfirst", "priority", "securityDescriptor", "env", "hidewindow");

    /**
     * tracelog's options, as Microsoft Learn's "Tracelog Command Syntax" documents them
     * (learn.microsoft.com/windows-hardware/drivers/devtest/tracelog-command-syntax); the script uses no other.
     */
    static final Set<String> TRACELOG_OPTIONS = Set.of("-start", "-stop", "-q", "-l", "-flush", "-update", "-enable", "-disable",
            "-systemrundown", "-f", "-b", "-min", "-max", "-ft", "-seq", "-cir", "-newfile", "-prealloc", "-append", "-rt", "-kd",
            "-eflag", "-nodisk", "-nonet", "-noprocess", "-nothread", "-systemlogger", "-UsePerfCounter", "-UseSystemTime",
            "-UseCPUCycle", "-independent", "-paged", "-lowcapacity", "-bt", "-kb", "-guid", "-level", "-matchanykw", "-matchallkw");

    /** EnableFlags (EVENT_TRACE_PROPERTIES, Microsoft Learn), by the kernel flag names tracelog and xperf take. */
    static final Map<String, Integer> KERNEL_FLAGS = Map.of("PROC_THREAD", 0x1 | 0x2, "CSWITCH", 0x10, "DISPATCHER", 0x800);

    /** For each command a doc may give, the Microsoft Learn page that documents it: collecting.md must cite it. */
    static final Map<String, String> COMMAND_PAGES = Map.of(
            "tracelog", "learn.microsoft.com/windows-hardware/drivers/devtest/tracelog-command-syntax",
            "logman", "learn.microsoft.com/windows-server/administration/windows-commands/logman-query",
            "xperf", "learn.microsoft.com/windows-hardware/test/wpt/start",
            "wpr", "learn.microsoft.com/windows-hardware/test/wpt/wpr-command-line-options",
            "schtasks", "learn.microsoft.com/windows-server/administration/windows-commands/schtasks-create",
            "icacls", "learn.microsoft.com/windows-server/administration/windows-commands/icacls",
            "eventcreate", "learn.microsoft.com/windows-server/administration/windows-commands/eventcreate",
            "typeperf", "learn.microsoft.com/windows-server/administration/windows-commands/typeperf");

    private static Document xml(String text) throws Exception {
        var f = DocumentBuilderFactory.newInstance();
        f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        return f.newDocumentBuilder().parse(new java.io.ByteArrayInputStream(text.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    }

    private static List<String> elementNames(Document d) {
        List<String> names = new ArrayList<>();
        NodeList all = d.getElementsByTagName("*");
        for (int i = 0; i < all.getLength(); i++) names.add(all.item(i).getNodeName());
        return names;
    }

    private static String only(Document d, String name) {
        NodeList n = d.getElementsByTagName(name);
        assertEquals(1, n.getLength(), "one <" + name + ">");
        return n.item(0).getTextContent().trim();
    }

    @Test
    void theWinSwConfigurationUsesOnlyWhatWinSw212ReadsAndALowPrivilegeAccount() throws Exception {
        Document d = xml(Files.readString(WINSW));
        assertEquals("service", d.getDocumentElement().getNodeName());
        for (String name : elementNames(d)) assertTrue(WINSW_2_12_ELEMENTS.contains(name), "<" + name + "> is not read by WinSW 2.12");
        // the account: <domain> and <user>; a gMSA (a name ending in $) has no password; never LocalSystem
        String user = only(d, "user");
        assertFalse(only(d, "domain").isEmpty());
        assertTrue(user.endsWith("$"), "a group managed service account: " + user);
        assertEquals(0, d.getElementsByTagName("password").getLength(), "a gMSA's password is Windows'");
        assertFalse(user.equalsIgnoreCase("LocalSystem") || user.equalsIgnoreCase("SYSTEM"));
        assertEquals("true", only(d, "allowservicelogon"));
        // recovery from <onfailure> (WinSW writes it at install), logs where the account may write
        assertTrue(d.getElementsByTagName("onfailure").getLength() > 0);
        assertFalse(only(d, "logpath").isEmpty());
        Element log = (Element) d.getElementsByTagName("log").item(0);
        assertEquals("roll-by-size", log.getAttribute("mode"));
        // the arguments are swapstream's own ingest --watch options
        String arguments = only(d, "arguments");
        String[] swapstream = arguments.substring(arguments.indexOf("swapstream.jar") + "swapstream.jar".length()).trim().split("\\s+");
        CommandLine.ParseResult parsed = Swapstream.commandLine().parseArgs(swapstream);
        assertEquals("ingest", parsed.subcommand().commandSpec().name());
        assertEquals(Path.of("D:\\swapstream\\traces"), parsed.subcommand().matchedOptionValue("--watch", Path.of("")));
        assertEquals("delete", parsed.subcommand().matchedOptionValue("--after-publish", ""));
        assertEquals(java.time.Duration.ofSeconds(1), parsed.subcommand().matchedOptionValue("--flush-timer", java.time.Duration.ZERO));
        assertTrue(parsed.subcommand().matchedOptionValue("--http", "").endsWith(":8083"));
        // the same trace folder as the script's default
        assertTrue(Files.readString(SCRIPT).contains("[string] $TraceDir = 'D:\\swapstream\\traces'"));
    }

    @Test
    void theDocsXmlIsTheShippedFileAndNothingRedundantOrIgnoredIsLeft() throws Exception {
        String doc = Files.readString(DOC);
        Matcher m = Pattern.compile("(?s)```xml\\n(.*?)```").matcher(doc);
        int blocks = 0;
        while (m.find()) {
            blocks++;
            for (String name : elementNames(xml(m.group(1)))) {
                assertTrue(WINSW_2_12_ELEMENTS.contains(name), "collecting.md: <" + name + "> is not read by WinSW 2.12");
            }
        }
        assertTrue(blocks > 0, "collecting.md shows the WinSW configuration");
        // as the shipped file has it, and the grants name its account
        String file = Files.readString(WINSW);
        String service = file.substring(file.indexOf("<service>"), file.indexOf("</service>") + "</service>".length());
        assertTrue(doc.contains(service), "collecting.md shows windows/swapstream-ingest.xml as it is");
        Document d = xml(file);
        String account = only(d, "domain") + "\\" + only(d, "user");
        for (String grant : List.of(account + ":(OI)(CI)RX", account + ":(OI)(CI)(D)", account + ":(OI)(CI)M")) {
            assertTrue(doc.contains("\"" + grant + "\""), "icacls grants " + grant);
        }
        assertTrue(doc.contains("windows/swapstream-ingest.xml") && doc.contains("windows/swapstream-collect.ps1"));
        // (WinSW 3.x's <serviceaccount><username>, which 2.12 ignores, is caught above as an element 2.12 does not read)
        assertFalse(doc.matches("(?s).*sc(\\.exe)? failure .*"), "WinSW writes the recovery settings from <onfailure>");
        assertFalse(doc.matches("(?s).*logman (stop|start) \"NT Kernel Logger\".*"), "nothing stops a session it did not start");
    }

    /** The script's tracelog arguments: those of the Start-OwnSession call, as the script lists them. */
    private static List<String> startArguments(String script) {
        List<String> args = new ArrayList<>();
        Matcher m = Pattern.compile("\\$arguments \\+?= @\\(([^)]*)\\)").matcher(script);
        while (m.find()) {
            Matcher a = Pattern.compile("'([^']*)'").matcher(m.group(1));
            while (a.find()) args.add(a.group(1));
        }
        Matcher one = Pattern.compile("\\$arguments \\+= '([^']*)'").matcher(script);
        while (one.find()) args.add(one.group(1));
        return args;
    }

    @Test
    void theScriptsCommandsAreTheDocumentedOnes() throws Exception {
        String script = Files.readString(SCRIPT);
        List<String> start = startArguments(script);
        for (String flag : List.of("-start", "-systemlogger", "-f", "-b", "-min", "-max", "-ft", "-UsePerfCounter", "-nodisk", "-nonet", "-eflag")) {
            assertTrue(start.contains(flag), "the session starts with " + flag + ": " + start);
        }
        for (String a : start) if (a.startsWith("-")) assertTrue(TRACELOG_OPTIONS.contains(a), a + " is not a documented tracelog option");
        // every tracelog call the script makes uses documented options
        Matcher calls = Pattern.compile("Invoke-Tracelog @\\(([^)]*)\\)").matcher(script);
        int n = 0;
        while (calls.find()) {
            n++;
            Matcher a = Pattern.compile("'(-[^']*)'").matcher(calls.group(1));
            while (a.find()) assertTrue(TRACELOG_OPTIONS.contains(a.group(1)), a.group(1));
        }
        assertTrue(n >= 2, "tracelog -q and -stop");
        // the kernel flags: the names the doc gives, and their mask the doc's 0x813
        Matcher f = Pattern.compile("\\$KernelFlags = '([A-Z_+]+)'").matcher(script);
        assertTrue(f.find());
        int mask = 0;
        for (String name : f.group(1).split("\\+")) {
            assertNotNull(KERNEL_FLAGS.get(name), name);
            mask |= KERNEL_FLAGS.get(name);
        }
        assertEquals(0x813, mask);
        String doc = Files.readString(DOC);
        assertTrue(doc.contains("-eflag " + f.group(1)), "collecting.md gives the same flags");
        assertTrue(doc.contains("0x813"));
        assertTrue(doc.contains("-systemlogger") && doc.contains("-UsePerfCounter") && doc.contains("-ft 1"));
        // it stops a session in one place only, after checking that the session is its own
        assertEquals(1, count(script, "'-stop'"), "one tracelog -stop");
        int stopFn = script.indexOf("function Stop-OwnSession");
        int stop = script.indexOf("'-stop'");
        int check = script.indexOf("Test-OwnSession $Query", stopFn);
        assertTrue(stopFn >= 0 && check > stopFn && check < stop, "Stop-OwnSession checks ownership before tracelog -stop");
        assertFalse(script.toLowerCase().contains("logman stop") || script.contains("'-x'"), "never stops another session");
        // no output goes into a function's return value by mistake: reports use Write-Host
        assertFalse(script.contains("Write-Output"));
    }

    @Test
    void theScriptNamesFilesInUtcAndRecognisesItsOwn() throws Exception {
        String script = Files.readString(SCRIPT);
        Matcher own = Pattern.compile("\\$OwnFile = '([^']*)'").matcher(script);
        assertTrue(own.find());
        assertTrue(script.contains("(Get-Date).ToUniversalTime().ToString('yyyyMMddTHHmmssZ', $Invariant)")
                && script.contains("$Invariant = [System.Globalization.CultureInfo]::InvariantCulture"), "file names in UTC");
        // the .NET format yyyyMMddTHHmmssZ: T and Z are literal there; as Java writes the same name
        String name = "swapstream-" + ZonedDateTime.of(2026, 11, 1, 1, 30, 0, 0, ZoneOffset.UTC)
                .format(DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")) + ".etl";
        assertEquals("swapstream-20261101T013000Z.etl", name);
        assertTrue(name.matches(own.group(1)));
        assertFalse("kernel-20261126-140000.etl".matches(own.group(1)), "the old local-time names are not Swapstream's own");
        // the status file the ingester reads, with the keys it reads
        assertTrue(script.contains("'" + WatchedFolder.STATUS_FILE + "'"));
        for (String key : List.of("time=", "result=", "events_lost=", "buffers_lost=", "message=")) assertTrue(script.contains("'" + key), key);
        // failures reach the event log: eventcreate's IDs are 1 to 1000
        assertTrue(script.contains("eventcreate.exe\" /L APPLICATION /T $Type /SO $EventSource /ID $Id"));
        Matcher ids = Pattern.compile("Write-Report '(ERROR|WARNING|INFORMATION)' (\\d+)").matcher(script);
        int reports = 0;
        while (ids.find()) {
            reports++;
            int id = Integer.parseInt(ids.group(2));
            assertTrue(id >= 1 && id <= 1000, "eventcreate /ID " + id);
        }
        assertTrue(reports >= 2);
        // the backlog's cap and the data volume
        assertTrue(script.contains("$MaxBacklogMB") && script.contains("$env:SystemDrive"));
    }

    @Test
    void everyCommandInCollectingMdCitesThePageThatDocumentsIt() throws Exception {
        String doc = Files.readString(DOC);
        Matcher blocks = Pattern.compile("(?s)```(\\w*)\\n(.*?)```").matcher(doc);
        Set<String> used = new TreeSet<>();
        while (blocks.find()) {
            for (String line : blocks.group(2).split("\\n")) {
                String first = line.strip().split("\\s+")[0].toLowerCase();
                if (first.endsWith(".exe")) first = first.substring(0, first.length() - 4);
                if (COMMAND_PAGES.containsKey(first)) used.add(first);
            }
        }
        assertTrue(used.containsAll(List.of("tracelog", "schtasks", "icacls")), used.toString());
        for (String tool : used) assertTrue(doc.contains(COMMAND_PAGES.get(tool)), tool + ": cite " + COMMAND_PAGES.get(tool));
        // and says plainly what was and was not run on Windows
        assertTrue(doc.contains("## What was run, and what was not"));
        assertTrue(Arrays.stream(doc.split("\n")).anyMatch(l -> l.contains("nothing") && l.contains("Windows")));
    }

    private static int count(String s, String what) {
        int n = 0;
        for (int i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + 1)) n++;
        return n;
    }
}
