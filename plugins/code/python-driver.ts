/**
 * The small Python program behind python_execute. It reads requests, `<marker> <byte length>\n`
 * followed by the code, from its standard input, then gives the code /dev/null as input so
 * nothing it runs can swallow the next request. Code runs in the real `__main__` module, so
 * pickling and multiprocessing see functions it defines, and tracebacks show its source lines.
 *
 * `fresh`: runs one request and exits with its status. `persistent`: runs requests until its
 * input closes, keeping variables and imports like a notebook, echoing the value of a final
 * expression, and printing `\n<marker> <status>\n` on stdout and stderr after each one.
 */

export type PythonDriverMode = 'fresh' | 'persistent';

/** Python 3.8 or later (ast.Module needs type_ignores). */
export const pythonDriverSource = String.raw`
def _manus_driver():
    import ast, linecache, os, sys, traceback

    namespace = sys.modules['__main__'].__dict__
    namespace.pop('_manus_driver', None)
    persistent = sys.argv[1:] == ['persistent']
    sys.argv = ['']
    requests = os.fdopen(os.dup(0), 'rb')
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)

    def report(exception_type, exception, trace):
        if issubclass(exception_type, SyntaxError):
            trace = None
        traceback.print_exception(exception_type, exception, trace)

    def run_cell(source, name):
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        try:
            tree = ast.parse(source, name, 'exec')
            final = None
            if persistent and tree.body and isinstance(tree.body[-1], ast.Expr):
                final = ast.Expression(tree.body.pop().value)
            exec(compile(tree, name, 'exec'), namespace)
            if final is not None:
                sys.displayhook(eval(compile(final, name, 'eval'), namespace))
            return 0
        except SystemExit as stop:
            if stop.code is None:
                return 0
            if isinstance(stop.code, int):
                return stop.code
            print(stop.code, file=sys.stderr)
            return 1
        except BaseException:
            exception_type, exception, trace = sys.exc_info()
            # The first frame is this driver's; the code's own frames follow.
            report(exception_type, exception, trace.tb_next)
            return 1

    cell = 0
    while True:
        header = requests.readline()
        if not header:
            return 0
        marker, length = header.split()
        source = requests.read(int(length)).decode('utf-8')
        cell += 1
        status = run_cell(source, '<cell %d>' % cell if persistent else '<code>')
        sys.stdout.flush()
        sys.stderr.flush()
        if not persistent:
            return status
        line = b'\n' + marker + b' ' + str(status).encode() + b'\n'
        os.write(1, line)
        os.write(2, line)

raise SystemExit(_manus_driver())
`;

export function pythonDriverCommand(python: string, mode: PythonDriverMode): string[] {
  return [python, '-u', '-c', pythonDriverSource, mode];
}

/** One request for the driver; in fresh mode the marker is not printed and may be anything. */
export function encodePythonRequest(marker: string, code: string): Buffer {
  const body = Buffer.from(code, 'utf8');
  return Buffer.concat([Buffer.from(`${marker} ${body.length}\n`), body]);
}
