import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

const NAV = 'trawl:navigate';

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  window.dispatchEvent(new Event(NAV));
}

export interface Location {
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

/** The current location; re-renders on navigation (links, back and forward). */
export function useLocation(): Location {
  const [loc, setLoc] = useState(current);
  useEffect(() => {
    const on = () => setLoc(current());
    window.addEventListener('popstate', on);
    window.addEventListener(NAV, on);
    return () => {
      window.removeEventListener('popstate', on);
      window.removeEventListener(NAV, on);
    };
  }, []);
  return loc;
}

export function Link(
  props: { href: string; children: ComponentChildren } & AnchorHTMLAttributes<HTMLAnchorElement>,
) {
  const { href, children, ...rest } = props;
  return (
    <a
      {...rest}
      href={href}
      onClick={(e) => {
        if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

/** `/jobs/:id` against a path: the parameters, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const split = (x: string) => (x === '/' || x === '' ? [''] : x.replace(/\/+$/, '').split('/'));
  const p = split(pattern);
  const s = split(path);
  if (p.length !== s.length) return null;
  const out: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const a = p[i]!;
    const b = s[i]!;
    if (a.startsWith(':')) {
      if (!b) return null;
      out[a.slice(1)] = decodeURIComponent(b);
    } else if (a !== b) return null;
  }
  return out;
}
