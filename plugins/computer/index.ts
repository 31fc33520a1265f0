/**
 * Computer use: a virtual desktop (Xvfb, a window manager, xdotool) in the run's sandbox, driven
 * with the mouse and keyboard by the computer tool.
 */
import computer from './computer.js';

export default [computer];
