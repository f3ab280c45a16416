<#
.SYNOPSIS
  Swapstream's kernel trace collection on one Windows host: starts, rotates and stops the
  "Swapstream" system logger session (context switches into .etl files for `swapstream ingest --watch`).

.DESCRIPTION
  Run as SYSTEM by two scheduled tasks (docs/collecting.md "Rotation"): at startup and every 10 minutes
  with -Action Rotate. Each run:
    1. checks the trace folder (on a data volume, not the system drive) and its backlog against the cap;
    2. if the session runs, reads it (tracelog -q) and stops it only if it is Swapstream's own: its log
       file is in the trace folder and named swapstream-<UTC time>.etl. A session of that name writing
       anywhere else is left alone and reported;
    3. starts the session again on a new file named by the UTC time;
    4. writes the outcome to swapstream-collector.status in the trace folder (the ingester serves it on
       /metrics) and, on a failure or lost events, to the Application event log (eventcreate).
  -Action Stop stops Swapstream's own session (after the same check); -Action Status only reads it.

  Windows 8 / Server 2012 and later: a system logger session of Swapstream's own name
  (tracelog -systemlogger, EVENT_TRACE_SYSTEM_LOGGER_MODE). Older systems: -NtKernelLogger uses the one
  NT Kernel Logger instead, which then no other tool on the host can use while Swapstream holds it.

  Nothing here has been run on Windows by the project: see docs/collecting.md "What was run".
  Needs Windows PowerShell 5.1 and tracelog.exe (Windows SDK or WDK).
#>
[CmdletBinding()]
param(
    [ValidateSet('Rotate', 'Stop', 'Status')] [string] $Action = 'Rotate',
    [string] $TraceDir = 'D:\swapstream\traces',
    [string] $Tracelog = 'C:\swapstream\tracelog.exe',
    [string] $SessionName = 'Swapstream',
    # the fallback for Windows 7 / Server 2008 R2: the NT Kernel Logger, which other tools then cannot use
    [switch] $NtKernelLogger,
    # peak context switches a second on the whole host (typeperf "\System\Context Switches/sec"): sizes the buffers
    [long] $PeakSwitchesPerSecond = 20000,
    [int] $FlushTimerSeconds = 1,
    # the backlog's cap: past it (or under MinFreeMB free on the volume) no new file is started, and it says so
    [long] $MaxBacklogMB = 2048,
    [long] $MinFreeMB = 2048,
    [switch] $AllowSystemDrive
)

$ErrorActionPreference = 'Stop'
Set-StrictMode -Version 3

$KernelLoggerName = 'NT Kernel Logger'
$Logger = if ($NtKernelLogger) { $KernelLoggerName } else { $SessionName }
$StatusFile = Join-Path $TraceDir 'swapstream-collector.status'
$OwnFile = '^swapstream-\d{8}T\d{6}Z\.etl$'
$EventSource = 'Swapstream'
# times as ISO 8601 whatever the host's culture (its calendar and time separator)
$Invariant = [System.Globalization.CultureInfo]::InvariantCulture
# EnableFlags 0x813 = PROCESS 0x1 | THREAD 0x2 | CSWITCH 0x10 | DISPATCHER 0x800 (EVENT_TRACE_PROPERTIES), by tracelog's names
$KernelFlags = 'PROC_THREAD+CSWITCH+DISPATCHER'

function Write-Status([bool] $Ok, [string] $Message, $Query) {
    $lines = @(
        'time=' + (Get-Date).ToUniversalTime().ToString('yyyy-MM-ddTHH:mm:ssZ', $Invariant),
        'result=' + $(if ($Ok) { 'ok' } else { 'error' }),
        'session=' + $Logger,
        'events_lost=' + $(if ($Query) { $Query.EventsLost } else { '' }),
        'buffers_lost=' + $(if ($Query) { $Query.BuffersLost } else { '' }),
        'message=' + ($Message -replace '[\r\n]+', ' ')
    )
    $tmp = $StatusFile + '.tmp'
    try {
        [System.IO.File]::WriteAllLines($tmp, $lines)   # UTF-8 without a byte order mark
        Move-Item -LiteralPath $tmp -Destination $StatusFile -Force
    } catch {
        Write-Report 'ERROR' 103 ("cannot write $StatusFile" + ': ' + $_.Exception.Message)
    }
}

# The Application event log: eventcreate (Windows Commands) creates the source on first use; IDs 1 to 1000
function Write-Report([string] $Type, [int] $Id, [string] $Message) {
    Write-Host "$Type ${Id}: $Message"   # Write-Host: not into the output of the function that calls it
    & "$env:SystemRoot\System32\eventcreate.exe" /L APPLICATION /T $Type /SO $EventSource /ID $Id /D "$Logger session: $Message" | Out-Null
}

function Fail([string] $Message, $Query) {
    Write-Report 'ERROR' 101 $Message
    Write-Status $false $Message $Query
    exit 1
}

# tracelog -q prints the session's properties, one "Name: value" a line; the labels are read loosely, as
# tracelog's output is not documented: a label not found leaves its value unknown, never zero
function Read-Session([string] $Output) {
    function Field([string] $Pattern) {
        $m = [regex]::Match($Output, "(?im)^\s*$Pattern\s*:\s*(.+?)\s*$")
        if ($m.Success) { $m.Groups[1].Value } else { $null }
    }
    $file = Field 'Log\s*File\s*Name'
    $events = Field 'Events\s+Lost'
    $logBuffers = Field 'Log\s+Buffers\s+Lost'
    $rtBuffers = Field 'Real\s*Time\s+Buffers\s+Lost'
    $buffers = $null
    if ($logBuffers -match '^\d+$' -and $rtBuffers -match '^\d+$') { $buffers = [long] $logBuffers + [long] $rtBuffers }
    [pscustomobject] @{
        LogFileName = $file
        EventsLost  = $(if ($events -match '^\d+$') { [long] $events } else { $null })
        BuffersLost = $buffers
    }
}

# tracelog with its output and exit code; its error output is text, not a PowerShell error (which
# $ErrorActionPreference = 'Stop' would throw on in Windows PowerShell 5.1)
function Invoke-Tracelog([string[]] $Arguments) {
    $previous = $ErrorActionPreference
    $ErrorActionPreference = 'Continue'
    try {
        $out = & $Tracelog @Arguments 2>&1 | Out-String
        $code = $LASTEXITCODE
    } finally {
        $ErrorActionPreference = $previous
    }
    [pscustomobject] @{ Output = $out; ExitCode = $code }
}

# The session as it runs, or $null when no session of that name runs
function Get-Session {
    $r = Invoke-Tracelog @('-q', $Logger)
    if ($r.ExitCode -ne 0) { return $null }
    Read-Session $r.Output
}

# Swapstream's own: its log file is in the trace folder and named as this script names them
function Test-OwnSession($Query) {
    if (-not $Query -or -not $Query.LogFileName) { return $false }
    $dir = [System.IO.Path]::GetDirectoryName($Query.LogFileName)
    $name = [System.IO.Path]::GetFileName($Query.LogFileName)
    return ($dir.TrimEnd('\') -ieq (Resolve-Path -LiteralPath $TraceDir).ProviderPath.TrimEnd('\')) -and ($name -match $OwnFile)
}

# Stops the session only after it is found to be Swapstream's own; returns what it said at the end
function Stop-OwnSession($Query) {
    if (-not (Test-OwnSession $Query)) {
        Fail ("a session named '$Logger' runs but writes '" + $Query.LogFileName + "', not a swapstream-*.etl file in " +
              "$TraceDir`: not Swapstream's, left alone; no Swapstream trace on this host until it is gone") $Query
    }
    $r = Invoke-Tracelog @('-stop', $Logger)
    if ($r.ExitCode -ne 0) { Fail ("tracelog -stop $Logger failed (exit " + $r.ExitCode + "): " + $r.Output) $Query }
    $end = Read-Session $r.Output
    if ($null -eq $end.EventsLost) { $end = $Query }   # what it said a moment before it stopped
    if ($end.EventsLost -gt 0 -or $end.BuffersLost -gt 0) {
        Write-Report 'WARNING' 102 ("lost " + $end.EventsLost + " events and " + $end.BuffersLost + " buffers in " +
                                    $Query.LogFileName + ": raise the buffers (docs/collecting.md 'Buffers')")
    }
    return $end
}

# Buffers from the processors and the switch rate (docs/collecting.md "Buffers"): 64 bytes a switch (a
# CSwitch event and a ReadyThread event), each processor filling f buffers a second at the peak; two buffers
# a processor at least (EVENT_TRACE_PROPERTIES, MinimumBuffers), plus two seconds of flushing; twenty more
# for the maximum
function Get-BufferSettings {
    $cpus = [int] (Get-CimInstance Win32_ComputerSystem).NumberOfLogicalProcessors
    $perCpu = [math]::Ceiling($PeakSwitchesPerSecond / $cpus) * 64
    $kb = 16
    while ($kb -lt 64 -and $perCpu -gt $kb * 1024) { $kb *= 2 }
    $fill = [math]::Max(1, [math]::Ceiling($perCpu / ($kb * 1024)))
    $min = $cpus * (2 + 2 * $fill)
    [pscustomobject] @{ Processors = $cpus; BufferKB = $kb; Min = $min; Max = $min + 20 }
}

function Start-OwnSession {
    $file = Join-Path $TraceDir ('swapstream-' + (Get-Date).ToUniversalTime().ToString('yyyyMMddTHHmmssZ', $Invariant) + '.etl')
    $b = Get-BufferSettings
    $arguments = @('-start', $Logger)
    if (-not $NtKernelLogger) { $arguments += '-systemlogger' }
    $arguments += @('-f', $file, '-b', [string] $b.BufferKB, '-min', [string] $b.Min, '-max', [string] $b.Max, '-ft', [string] $FlushTimerSeconds,
                    '-UsePerfCounter', '-nodisk', '-nonet', '-eflag', $KernelFlags)
    $r = Invoke-Tracelog $arguments
    if ($r.ExitCode -ne 0) { Fail ("tracelog " + ($arguments -join ' ') + " failed (exit " + $r.ExitCode + "): " + $r.Output) $null }
    $now = Get-Session
    if (-not (Test-OwnSession $now)) { Fail ("started '$Logger' on $file, but tracelog -q does not show it writing there: " + $r.Output) $now }
    return $file
}

# --- one run at a time: a status read must not find the session between a rotation's stop and start
$lock = New-Object System.Threading.Mutex($false, 'Global\Swapstream-collect')
try {
    if (-not $lock.WaitOne([TimeSpan]::FromMinutes(2))) { Fail "another run of this script has held its lock for 2 minutes" $null }
} catch [System.Threading.AbandonedMutexException] {
    # the run before ended (exit) without releasing it: the lock is this run's now
}

# --- the checks before anything starts
if (-not (Test-Path -LiteralPath $Tracelog)) { Fail "no tracelog.exe at $Tracelog" $null }
if (-not (Test-Path -LiteralPath $TraceDir -PathType Container)) { Fail "no trace folder $TraceDir" $null }
$drive = (Resolve-Path -LiteralPath $TraceDir).ProviderPath.Substring(0, 2)
if (-not $AllowSystemDrive -and $drive -ieq $env:SystemDrive) {
    Fail "the trace folder $TraceDir is on the system drive ($drive): put it on a data volume (or -AllowSystemDrive)" $null
}
if ($NtKernelLogger) {
    Write-Host "using the NT Kernel Logger: while Swapstream holds it, xperf, WPR's kernel logger, PerfView and others cannot start theirs"
}

$running = Get-Session

switch ($Action) {
    'Status' {
        if (-not $running) { Fail "not running" $null }
        if (-not (Test-OwnSession $running)) { Fail ("'$Logger' runs but writes " + $running.LogFileName + ": not Swapstream's") $running }
        Write-Status $true ("running, writing " + $running.LogFileName) $running
        exit 0
    }
    'Stop' {
        if (-not $running) { Write-Status $true "not running; nothing to stop" $null; exit 0 }
        $end = Stop-OwnSession $running
        Write-Status $true ("stopped; last file " + $running.LogFileName) $end
        exit 0
    }
    'Rotate' {
        $etl = @(Get-ChildItem -LiteralPath $TraceDir -Filter '*.etl' -File)
        $backlogMB = [math]::Round((($etl | Measure-Object -Property Length -Sum).Sum) / 1MB)
        $freeMB = [math]::Round((Get-PSDrive -Name $drive.Substring(0, 1)).Free / 1MB)
        $end = $null
        if ($running) { $end = Stop-OwnSession $running }
        if ($backlogMB -gt $MaxBacklogMB -or $freeMB -lt $MinFreeMB) {
            Fail ("backlog $backlogMB MB in " + $etl.Count + " files (cap $MaxBacklogMB MB), $freeMB MB free on $drive " +
                  "(at least $MinFreeMB MB): not collecting until the ingester catches up") $end
        }
        $file = Start-OwnSession
        Write-Status $true ("started $file" + $(if ($running) { '; stopped ' + $running.LogFileName } else { '' })) $end
        exit 0
    }
}
