/** Suggests the closest known name for a misspelt one, or nothing when none is close. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const target = name.toLowerCase();
  for (const candidate of candidates) {
    const distance = editDistance(target, candidate.toLowerCase());
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  const tolerance = Math.max(2, Math.floor(name.length / 3));
  return bestDistance <= tolerance ? best : undefined;
}

export function didYouMean(name: string, candidates: Iterable<string>): string {
  const suggestion = closestName(name, candidates);
  return suggestion ? ` (did you mean '${suggestion}'?)` : '';
}

function editDistance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= right.length; column += 1) {
      const substitution = previous[column - 1] + (left[row - 1] === right[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column] + 1, current[column - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[right.length];
}
