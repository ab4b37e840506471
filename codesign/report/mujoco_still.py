"""A still of an exported design rendered by MuJoCo offscreen (``codesign export --png``).

MuJoCo renders through OpenGL: without a display (no ``DISPLAY``) :func:`render_keyframe`
asks for EGL (``MUJOCO_GL=egl``, unless set: ``osmesa`` is the other headless choice)
before MuJoCo is first imported; without a working OpenGL the renderer fails and the
caller says so in one line.
"""

from __future__ import annotations

import io

import numpy as np

WIDTH, HEIGHT = 640, 480        # pixels
DISTANCE = 2.4                  # m from the hip, looking along +y (the sagittal plane)


def render_keyframe(xml: str, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """uint8[height, width, 3]: the model ``xml`` at its first keyframe, seen from the side
    (the camera looks at the hip along the page's normal). Raises what MuJoCo raises when
    it cannot render (no OpenGL context)."""
    import os
    import sys
    import warnings

    if "DISPLAY" not in os.environ and "mujoco" not in sys.modules:
        os.environ.setdefault("MUJOCO_GL", "egl")
    import mujoco

    mj = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(mj)
    if mj.nkey:
        mujoco.mj_resetDataKeyframe(mj, data, 0)
    mujoco.mj_forward(mj, data)
    camera = mujoco.MjvCamera()
    camera.lookat[:] = [data.qpos[0] + 0.1, 0.0, 0.85]
    camera.distance, camera.azimuth, camera.elevation = DISTANCE, 90.0, -5.0
    with warnings.catch_warnings():          # glfw's without a display: the error says it
        warnings.simplefilter("ignore")
        with mujoco.Renderer(mj, height, width) as renderer:
            renderer.update_scene(data, camera)
            return renderer.render().copy()


def png_bytes(image: np.ndarray) -> bytes:
    """The PNG file of an RGB image uint8[h, w, 3]."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="PNG")
    return buffer.getvalue()
