/**
 * The shell text that starts the virtual desktop inside the desktop's session, and the one that
 * stops it. Everything runs in one long-lived shell of the run's sandbox, because under bubblewrap
 * each command gets its own /tmp and namespaces: an X server started by one command would be out
 * of reach of the next.
 */

/** The programs the desktop needs inside the sandbox, with the Debian package of each. */
export const desktopPrograms: ReadonlyArray<{ program: string; debian: string; purpose: string }> = [
  { program: 'Xvfb', debian: 'xvfb', purpose: 'the virtual X server' },
  { program: 'xauth', debian: 'xauth', purpose: 'the X server cookie' },
  { program: 'matchbox-window-manager', debian: 'matchbox-window-manager', purpose: 'the window manager' },
  { program: 'xdotool', debian: 'xdotool', purpose: 'mouse and keyboard input' },
  { program: 'import', debian: 'imagemagick', purpose: 'screenshots' },
];

/** Quoted as one shell word: nothing in it is expanded. */
export function shellWord(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

export interface DesktopStart {
  width: number;
  height: number;
  programs: readonly string[];
}

/**
 * Prints `display :N` and returns 0 once the X server answers and the programs are started.
 * The server takes connections only with a random cookie, so on a shared host (the `host`
 * sandbox) another local user cannot type into the desktop; it listens on no TCP port.
 */
export function desktopStartScript(start: DesktopStart): string {
  const missingCheck = desktopPrograms
    .map(({ program, debian }) => `command -v ${program} >/dev/null 2>&1 || __manus_missing="$__manus_missing ${program} (Debian package ${debian})"`)
    .join('\n');
  const programs = start.programs
    .map((program) => `( eval ${shellWord(program)} ) </dev/null >>"$MANUS_DESKTOP/programs.log" 2>&1 &`)
    .join('\n');
  return `
__manus_start_desktop() {
  __manus_missing=''
  ${missingCheck}
  if [ -n "$__manus_missing" ]; then echo "missing programs:$__manus_missing"; return 127; fi
  MANUS_DESKTOP=$(mktemp -d /tmp/manus-desktop.XXXXXXXX) || return 1
  export XAUTHORITY="$MANUS_DESKTOP/xauthority"
  : > "$XAUTHORITY"
  __manus_cookie=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \\n')
  # The server loads every cookie of its -auth file, whatever display the entry names.
  xauth -q add :0 . "$__manus_cookie" || return 1
  Xvfb -displayfd 3 -screen 0 ${start.width}x${start.height}x24 -nolisten tcp -auth "$XAUTHORITY" 3>"$MANUS_DESKTOP/display" >"$MANUS_DESKTOP/xvfb.log" 2>&1 &
  __manus_server=$!
  for __manus_attempt in $(seq 200); do
    [ -s "$MANUS_DESKTOP/display" ] && break
    kill -0 "$__manus_server" 2>/dev/null || break
    sleep 0.05
  done
  __manus_number=$(tr -dc 0-9 < "$MANUS_DESKTOP/display")
  if [ -z "$__manus_number" ]; then echo "Xvfb did not start:"; tail -n 20 "$MANUS_DESKTOP/xvfb.log"; return 1; fi
  export DISPLAY=":$__manus_number"
  xauth -q add "$DISPLAY" . "$__manus_cookie" || return 1
  unset __manus_cookie
  xdotool getdisplaygeometry >/dev/null || { echo "the X server on $DISPLAY does not answer"; return 1; }
  matchbox-window-manager -use_titlebar no >"$MANUS_DESKTOP/window-manager.log" 2>&1 &
  ${programs}
  # Waits until the window manager has given a program's window the keyboard: keys typed before
  # then would go nowhere. Without programs there is no window to wait for.
  ${start.programs.length > 0 ? `for __manus_attempt in $(seq 100); do
    xdotool getactivewindow >/dev/null 2>&1 && break
    sleep 0.1
  done` : ''}
  echo "display $DISPLAY"
}
__manus_start_desktop
`;
}

/** Stops the desktop's programs and removes its folder; the session is killed after it anyway. */
export const desktopStopScript = `
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null
[ -n "$MANUS_DESKTOP" ] && rm -rf "$MANUS_DESKTOP"
true
`;
